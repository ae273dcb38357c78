#include "secure/revocation.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/strings.hpp"

namespace lattice::secure {

Result<RevokedKeys> parse_revoked(std::string_view text) {
  RevokedKeys keys;
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos || line[start] == '#') continue;
    line.remove_prefix(start);
    std::string_view word = line.substr(0, line.find_first_of(" \t\r#"));
    auto bytes = from_hex(word);
    if (!bytes || bytes->size() != kStaticKeyBytes)
      return make_error(cat("line ", number, " is not a static key (", 2 * kStaticKeyBytes,
                            " hex digits, as lattice-agentd --certify prints it)"));
    StaticKey key{};
    std::memcpy(key.data(), bytes->data(), kStaticKeyBytes);
    keys.insert(key);
  }
  return keys;
}

Result<RevokedKeys> load_revoked_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(cat("cannot read revocation file ", path, ": ", std::strerror(errno)));
  std::string text(kMaxRevokedFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxRevokedFile)
    return make_error(
        cat("revocation file ", path, " holds more than ", kMaxRevokedFile, " bytes"));
  auto keys = parse_revoked(text);
  if (!keys) return make_error(cat("revocation file ", path, ": ", keys.error().message));
  return keys;
}

std::string static_key_hex(const StaticKey& key) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(key.data()), key.size()));
}

}  // namespace lattice::secure
