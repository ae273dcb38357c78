// libFuzzer target: what `lattice-rank-exec --describe` prints, as the agent reads it
// (proc/user_description.hpp). Any bytes are read or refused, never crash; what is read is
// within the bounds and holds no line break.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proc/user_description.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto user = lattice::proc::parse_user_description(text, 1000, 100, "u");
  if (!user) return 0;
  if (user->groups.size() > lattice::proc::kMaxGroups) std::abort();
  for (const auto* field : {&user->home, &user->shell})
    if (field->find('\n') != std::string::npos || field->find('\0') != std::string::npos)
      std::abort();
  return 0;
}
