// libFuzzer target: the kernel's cgroup and process files as the agent reads them
// (proc/kernel_files.hpp). Mount points and command names can hold bytes a user chose; any
// text must parse or be skipped, never crash, and what parses keeps its invariants.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proc/kernel_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice::proc;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& m : cgroup_mounts(text))
    if (m.path.empty() || m.path[0] != '/' || (m.version != 1 && m.version != 2) ||
        (m.version == 2 && !m.controllers.empty()))
      std::abort();
  for (const auto& m : cgroup_memberships(text))
    if (m.hierarchy < 0 || m.path.empty() || m.path[0] != '/') std::abort();
  for (int pid : parse_pids(text))
    if (pid <= 0) std::abort();
  if (parse_stat_ppid(text) < -1) std::abort();
  environ_has(text, "LATTICE_LAUNCH_ID=x");
  if (auto kills = parse_oom_kills(text); kills && *kills > uint64_t{INT64_MAX}) std::abort();
  return 0;
}
