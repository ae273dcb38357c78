// libFuzzer target: a revocation file's text (secure/revocation.hpp), which an agent reads at
// its start and on every SIGHUP. Any text is taken or refused with the line it failed on,
// never crashes; what it takes holds no more keys than it has lines, and each key, written
// back one a line, reads back as the same set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "secure/revocation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > lattice::secure::kMaxRevokedFile) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto keys = lattice::secure::parse_revoked(text);
  if (!keys) {
    if (keys.error().message.rfind("line ", 0) != 0) std::abort();
    return 0;
  }
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  if (keys->size() > lines) std::abort();
  std::string written;
  for (const auto& key : *keys) written += lattice::secure::static_key_hex(key) + "\n";
  auto again = lattice::secure::parse_revoked(written);
  if (!again || *again != *keys) std::abort();
  return 0;
}
