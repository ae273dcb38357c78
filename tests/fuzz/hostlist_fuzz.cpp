// libFuzzer target: host lists as a launch request carries them (base/hostlist.hpp). Any text
// must parse or be refused, never crash or exceed its bound; a parsed list names, finds and
// joins what its expansion holds; what expands compresses back to a list that expands to the
// same names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>

#include "base/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMax = 4096;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = lattice::HostList::parse(text, kMax);
  if (!list) return 0;
  auto names = list->names();
  if (names.empty() || names.size() != list->size() || names.size() > kMax) std::abort();
  std::unordered_set<std::string> seen;
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) {
    auto at = list->find(names[i]);
    if (list->name(i) != names[i] || !at || *at > i || names[*at] != names[i]) std::abort();
    seen.insert(names[i]);
    joined += (i ? "," : "") + names[i];
  }
  if (list->joined(',') != joined) std::abort();
  auto twice = list->duplicate();
  if (twice.has_value() != (seen.size() < names.size()) || (twice && !seen.count(*twice)))
    std::abort();
  auto again = lattice::compress_hostlist(names);
  if (!again) return 0;  // a name the compact form cannot hold (a bracket, a comma, empty)
  auto back = lattice::HostList::parse(*again, kMax);
  if (!back || back->names() != names) std::abort();
  return 0;
}
