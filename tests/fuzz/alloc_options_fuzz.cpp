// libFuzzer target: `lattice alloc`'s command line as the launcher reads it (parse_alloc_options:
// --agents, -N, -t, --mem, --id, the CXI options, where the batch step's command starts) and
// --mem's sizes (parse_memory). Any argv is refused with an error or gives options within their
// documented bounds: a command that is argv's tail and names a program, -N within the agents
// given, an id an agent takes, a time limit within a year, a memory size of whole KiB within
// 2^62 bytes.
// Input: argv, NUL-separated; its last argument is also tried as --mem's value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.hpp"
#include "launcher/alloc_options.hpp"
#include "wire/allocation.hpp"

namespace {

using namespace lattice;
using namespace lattice::launcher;

constexpr uint64_t kYearMs = 366ull * 86400 * 1000;
constexpr uint64_t kMaxMemory = uint64_t{1} << 62;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "alloc_options: %s\n", what);
  std::abort();
}

void check_memory(const std::string& text) {
  auto bytes = parse_memory(text);
  if (!bytes) return;
  require(*bytes > 0 && *bytes <= kMaxMemory && *bytes % 1024 == 0, "a --mem size in bounds");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv =
      split(std::string_view(reinterpret_cast<const char*>(data), size), '\0');
  if (!argv.empty()) check_memory(argv.back());
  auto options = parse_alloc_options(argv);
  if (!options) return 0;
  const AllocOptions& o = *options;
  if (o.help) return 0;  // --help asks for nothing else
  require(!o.command.empty() && !o.command.front().empty(), "a command naming a program");
  require(o.command.size() <= argv.size() &&
              std::equal(o.command.begin(), o.command.end(),
                         argv.end() - static_cast<long>(o.command.size())),
          "the command is argv's tail");
  require(o.nodes >= 0 && o.nodes <= 65536, "-N in 0..65536");
  require(o.agents.empty() || o.nodes <= static_cast<int>(o.agents.size()),
          "-N within the agents given");
  for (const auto& agent : o.agents)
    require(agent.address.port > 0 && agent.address.port <= 65535 && !agent.address.host.empty(),
            "agents' addresses");
  require(o.id.empty() || wire::valid_allocation_id(o.id), "an id agents take");
  require(o.time_limit_ms <= kYearMs, "-t within a year");
  require(o.time_limit_ms % 1000 == 0, "-t in whole seconds");
  require(o.memory_bytes <= kMaxMemory && o.memory_bytes % 1024 == 0, "--mem in bounds");
  require(o.cpus <= 65536 && o.vni <= 65536, "counts within 65536");
  return 0;
}
