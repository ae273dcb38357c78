// libFuzzer target: the agent's YAML configuration (config::parse_config). Any text must give a
// config or an error, never a crash or an escaped exception; and a config that parses describes
// itself stably: when describe()'s text parses again, it describes the same config.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = config::parse_config(text, "fuzz");
  if (!config) return 0;
  std::string described = config::describe(*config);
  // describe() may write what parse refuses (an empty key_file is shown as ''); that is fine.
  auto again = config::parse_config(described, "fuzz-described");
  if (again && config::describe(*again) != described) std::abort();
  return 0;
}
