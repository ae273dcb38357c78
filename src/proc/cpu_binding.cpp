#include "proc/cpu_binding.hpp"

#include <sched.h>

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::proc {

Result<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind bind;
  if (text.empty() || text == "none") return bind;
  if (text == "cores") {
    bind.kind = CpuBind::Kind::cores;
    return bind;
  }
  if (text == "sockets") {
    bind.kind = CpuBind::Kind::sockets;
    return bind;
  }
  constexpr std::string_view kMap = "map_cpu:";
  if (starts_with(text, kMap) && text.size() > kMap.size()) {
    bind.kind = CpuBind::Kind::map_cpu;
    for (const auto& piece : split(text.substr(kMap.size()), ',')) {
      auto cpu = parse_int(piece);
      if (!cpu || *cpu < 0 || *cpu >= kMaxCpus)
        return make_error(cat("--cpu-bind: '", piece, "' in map_cpu is not a CPU number"));
      bind.map.push_back(static_cast<int>(*cpu));
    }
    return bind;
  }
  return make_error(
      cat("--cpu-bind: none, cores, sockets or map_cpu:LIST, got '", std::string(text), "'"));
}

Result<std::vector<int>> cpus_for(const CpuBind& bind, const Topology& topology, int local_rank) {
  auto round_robin = [local_rank](const std::vector<std::vector<int>>& groups,
                                  const char* what) -> Result<std::vector<int>> {
    if (groups.empty()) return make_error(cat("this node's topology shows no ", what));
    return groups[static_cast<size_t>(local_rank) % groups.size()];
  };
  switch (bind.kind) {
    case CpuBind::Kind::none:
      return std::vector<int>{};
    case CpuBind::Kind::cores:
      return round_robin(topology.cores, "cores");
    case CpuBind::Kind::sockets:
      return round_robin(topology.sockets, "sockets");
    case CpuBind::Kind::map_cpu: {
      int cpu = bind.map[static_cast<size_t>(local_rank) % bind.map.size()];
      bool known = std::any_of(topology.cores.begin(), topology.cores.end(), [cpu](const auto& c) {
        return std::find(c.begin(), c.end(), cpu) != c.end();
      });
      if (!known)
        return make_error(cat("map_cpu names CPU ", cpu, ", which this node does not have"));
      return std::vector<int>{cpu};
    }
  }
  return std::vector<int>{};
}

size_t usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<size_t>(CPU_COUNT(&set));
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (int cpu : cpus) out += cat(out.empty() ? "" : ",", cpu);
  return out;
}

}  // namespace lattice::proc
