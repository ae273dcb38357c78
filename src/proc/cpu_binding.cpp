#include "proc/cpu_binding.hpp"

#include <sched.h>

#include <algorithm>
#include <set>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

constexpr std::string_view kKinds =
    "none, threads, cores, sockets, ldoms, map_cpu:LIST or mask_cpu:LIST";

// A mask_cpu item: hexadecimal, "0x" optional (as srun reads it), naming CPUs below kMaxCpus.
Result<std::vector<int>> parse_mask(std::string_view hex) {
  if (starts_with(hex, "0x") || starts_with(hex, "0X")) hex.remove_prefix(2);
  auto bad = [&] {
    return make_error(cat("--cpu-bind: '", std::string(hex),
                          "' in mask_cpu is not a hexadecimal mask of CPUs below ", kMaxCpus));
  };
  if (hex.empty()) return bad();
  std::vector<int> cpus;
  for (size_t i = 0; i < hex.size(); ++i) {
    char c = hex[hex.size() - 1 - i];  // the last digit holds CPUs 0-3
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return bad();
    for (int bit = 0; bit < 4; ++bit) {
      if (!(digit & (1 << bit))) continue;
      int cpu = static_cast<int>(i) * 4 + bit;
      if (cpu >= kMaxCpus) return bad();
      cpus.push_back(cpu);
    }
  }
  if (cpus.empty())
    return make_error(cat("--cpu-bind: mask '", std::string(hex), "' names no CPU"));
  return cpus;
}

bool has_cpu(const Topology& topology, int cpu) {
  return std::find(topology.pus.begin(), topology.pus.end(), cpu) != topology.pus.end();
}

// The groups that hold any of `cpus`, joined, ascending.
std::vector<int> widen(const std::vector<std::vector<int>>& groups, const std::vector<int>& cpus) {
  std::set<int> out;
  for (const auto& group : groups)
    if (std::any_of(group.begin(), group.end(), [&](int cpu) {
          return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
        }))
      out.insert(group.begin(), group.end());
  return {out.begin(), out.end()};
}

std::vector<std::vector<int>> numa_cpus(const Topology& topology) {
  std::vector<std::vector<int>> out;
  for (const auto& node : topology.numa) out.push_back(node.cpus);
  return out;
}

std::vector<std::vector<int>> one_each(const std::vector<int>& pus) {
  std::vector<std::vector<int>> out;
  for (int cpu : pus) out.push_back({cpu});
  return out;
}

std::vector<int> keep_only(const std::vector<int>& cpus, const std::set<int>& allowed) {
  std::vector<int> out;
  for (int cpu : cpus)
    if (allowed.count(cpu)) out.push_back(cpu);
  return out;
}

}  // namespace

Topology restrict_to(const Topology& topology, const std::vector<int>& cpus) {
  const std::set<int> allowed(cpus.begin(), cpus.end());
  Topology out;
  out.pus = keep_only(topology.pus, allowed);
  auto groups = [&](const std::vector<std::vector<int>>& from) {
    std::vector<std::vector<int>> kept;
    for (const auto& group : from)
      if (auto cpus_kept = keep_only(group, allowed); !cpus_kept.empty())
        kept.push_back(std::move(cpus_kept));
    return kept;
  };
  out.cores = groups(topology.cores);
  out.sockets = groups(topology.sockets);
  for (const auto& node : topology.numa)
    if (auto kept = keep_only(node.cpus, allowed); !kept.empty())
      out.numa.push_back(NumaNode{node.id, std::move(kept)});
  return out;
}

Result<CpuBind> parse_cpu_bind(std::string_view text) {
  using Kind = CpuBind::Kind;
  CpuBind bind;
  if (text.empty() || text == "none") return bind;
  constexpr std::pair<std::string_view, Kind> kWords[] = {{"threads", Kind::threads},
                                                          {"cores", Kind::cores},
                                                          {"sockets", Kind::sockets},
                                                          {"ldoms", Kind::ldoms}};
  for (const auto& [word, kind] : kWords)
    if (text == word) {
      bind.kind = kind;
      return bind;
    }
  constexpr std::string_view kMap = "map_cpu:", kMask = "mask_cpu:";
  if (starts_with(text, kMap) && text.size() > kMap.size()) {
    bind.kind = Kind::map_cpu;
    for (const auto& piece : split(text.substr(kMap.size()), ',')) {
      auto cpu = parse_int(piece);
      if (!cpu || *cpu < 0 || *cpu >= kMaxCpus)
        return make_error(cat("--cpu-bind: '", piece, "' in map_cpu is not a CPU number"));
      bind.map.push_back(static_cast<int>(*cpu));
    }
    return bind;
  }
  if (starts_with(text, kMask) && text.size() > kMask.size()) {
    bind.kind = Kind::mask_cpu;
    for (const auto& piece : split(text.substr(kMask.size()), ',')) {
      auto cpus = parse_mask(piece);
      if (!cpus) return cpus.error();
      bind.masks.push_back(std::move(cpus.value()));
    }
    return bind;
  }
  return make_error(cat("--cpu-bind: ", kKinds, ", got '", std::string(text), "'"));
}

Result<int> parse_cpus_per_task(std::string_view text) {
  auto n = parse_int(text);
  if (!n || *n < 1 || *n > kMaxCpus)
    return make_error(cat("--cpus-per-task: expected a whole number from 1 to ", kMaxCpus,
                          ", got '", std::string(text), "'"));
  return static_cast<int>(*n);
}

Status check_cpus_fit(int local_ranks, int cpus_per_task, size_t cpus, std::string_view node) {
  const size_t needed = static_cast<size_t>(local_ranks) * static_cast<size_t>(cpus_per_task);
  if (cpus_per_task <= 0 || needed <= cpus) return {};
  return make_error(cat("node ", node, ": ", local_ranks, local_ranks == 1 ? " rank" : " ranks",
                        " of ", cpus_per_task, " CPUs (-c ", cpus_per_task, ") need ", needed,
                        " CPUs, but launches there may use ", cpus));
}

Result<std::vector<int>> cpus_for(const CpuBind& bind, const Topology& topology, int local_rank,
                                  int cpus_per_task) {
  using Kind = CpuBind::Kind;
  const auto rank = static_cast<size_t>(local_rank);
  if (bind.kind == Kind::none) return std::vector<int>{};
  if (bind.kind == Kind::map_cpu || bind.kind == Kind::mask_cpu) {
    std::vector<int> cpus = bind.kind == Kind::map_cpu
                                ? std::vector<int>{bind.map[rank % bind.map.size()]}
                                : bind.masks[rank % bind.masks.size()];
    for (int cpu : cpus)
      if (!has_cpu(topology, cpu))
        return make_error(cat(bind.kind == Kind::map_cpu ? "map_cpu" : "mask_cpu", " names CPU ",
                              cpu, ", which this node does not have (or launches may not use)"));
    std::sort(cpus.begin(), cpus.end());
    return cpus;
  }
  const std::vector<std::vector<int>> threads = one_each(topology.pus);
  const std::vector<std::vector<int>> ldoms = numa_cpus(topology);
  const auto& units = bind.kind == Kind::threads ? threads
                      : bind.kind == Kind::cores ? topology.cores
                      : bind.kind == Kind::ldoms ? ldoms
                                                 : topology.sockets;
  const char* what = bind.kind == Kind::threads ? "CPUs"
                     : bind.kind == Kind::cores ? "cores"
                     : bind.kind == Kind::ldoms ? "NUMA nodes"
                                                : "sockets";
  if (units.empty()) return make_error(cat("this node's topology shows no ", what));
  if (cpus_per_task <= 0) return units[rank % units.size()];
  // The rank's own CPUs, then what holds them.
  const size_t n = static_cast<size_t>(cpus_per_task);
  if ((rank + 1) * n > topology.pus.size())
    return make_error(cat("local rank ", local_rank, " of ", n, " CPUs is beyond the ",
                          topology.pus.size(), " CPUs launches may use here"));
  std::vector<int> own(topology.pus.begin() + static_cast<long>(rank * n),
                       topology.pus.begin() + static_cast<long>((rank + 1) * n));
  if (bind.kind == Kind::threads) {
    std::sort(own.begin(), own.end());
    return own;
  }
  return widen(units, own);
}

int numa_of(const Topology& topology, const std::vector<int>& cpus) {
  if (cpus.empty()) return -1;
  for (const auto& node : topology.numa)
    if (std::find(node.cpus.begin(), node.cpus.end(), cpus.front()) != node.cpus.end())
      return node.id;
  return -1;
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
