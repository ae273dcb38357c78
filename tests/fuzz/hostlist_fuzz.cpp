// libFuzzer target: host lists as a launch request carries them (base/hostlist.hpp). Any text
// must expand or be refused, never crash or exceed its bound; what expands compresses back to
// a list that expands to the same names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMax = 4096;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto names = lattice::expand_hostlist(text, kMax);
  if (!names) return 0;
  if (names->empty() || names->size() > kMax) std::abort();
  auto again = lattice::compress_hostlist(*names);
  if (!again) return 0;  // a name the compact form cannot hold (a bracket, a comma, empty)
  auto back = lattice::expand_hostlist(*again, kMax);
  if (!back || *back != *names) std::abort();
  return 0;
}
