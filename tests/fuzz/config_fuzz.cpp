// libFuzzer target: the YAML configurations (the agent's config::parse_config and the launcher's
// parse_launcher_config, which share the walk). Any text must give a config or an error, never a
// crash or an escaped exception; and an agent config that parses describes itself stably: when
// describe()'s text parses again, it describes the same config.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/launcher_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto launcher = config::parse_launcher_config(text, "fuzz"); launcher) {
    if (launcher->vni > config::kMaxVni || launcher->fabric_attempts == 0) std::abort();
  }
  auto config = config::parse_config(text, "fuzz");
  if (!config) return 0;
  std::string described = config::describe(*config);
  // describe() may write what parse refuses (an empty key_file is shown as ''); that is fine.
  auto again = config::parse_config(described, "fuzz-described");
  if (again && config::describe(*again) != described) std::abort();
  return 0;
}
