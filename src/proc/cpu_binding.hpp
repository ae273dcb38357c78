// CPU binding as srun's --cpu-bind (with task/affinity) and mpiexec's -bind-to mean it, and
// CPUs per rank as srun's -c means it. Pure: the node's topology comes in as lists of CPU
// numbers (the agent reads it through hwloc: agent/node_topology.hpp); the result is the CPU
// list lattice-rank-exec binds to before it execs the rank.
//
// Without -c a binding unit (a thread, core, socket or NUMA node) goes to each local rank in
// turn. With -c N local rank i owns N CPUs of its own, the node's i*N .. i*N+N-1 in hwloc's order
// (a core's threads together), and the kind says what it is bound to: threads, those CPUs;
// cores, sockets, ldoms, the cores, sockets or NUMA nodes they lie in. map_cpu and mask_cpu name
// the CPUs outright, by local rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

// A NUMA node: its OS number (what a GPU's `numa` names) and its CPUs.
struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
};

// The node as binding sees it: the OS numbers of the CPUs (hardware threads) the launch may
// use, in hwloc's order, and of each core, socket and NUMA node among them. A group without
// such CPUs is left out.
struct Topology {
  std::vector<int> pus;
  std::vector<std::vector<int>> cores;
  std::vector<std::vector<int>> sockets;
  std::vector<NumaNode> numa;
};

// The topology with only `cpus` left (an allocation's CPUs), groups left empty dropped.
Topology restrict_to(const Topology& topology, const std::vector<int>& cpus);

// CPU numbers a binding may name are below this; so is -c.
inline constexpr int kMaxCpus = 1024;

struct CpuBind {
  // In the schema's order (CpuBindKind): the launch request carries the kind as it is.
  enum class Kind { none, cores, sockets, map_cpu, threads, ldoms, mask_cpu };
  Kind kind = Kind::none;
  std::vector<int> map;                 // map_cpu's list, by local rank (round robin)
  std::vector<std::vector<int>> masks;  // mask_cpu's masks as CPU lists, likewise
};

// "none", "threads", "cores", "sockets", "ldoms", "map_cpu:0,2,..." or "mask_cpu:0x3,0xc,..."
// (--cpu-bind; "" is none). The launch request carries the parsed form (schema CpuBinding).
Result<CpuBind> parse_cpu_bind(std::string_view text);
// -c/--cpus-per-task's value: 1 .. kMaxCpus.
Result<int> parse_cpus_per_task(std::string_view text);

// Whether `local_ranks` ranks of `cpus_per_task` CPUs each fit a node where launches may use
// `cpus`; the error names `node` and the numbers.
Status check_cpus_fit(int local_ranks, int cpus_per_task, size_t cpus, std::string_view node);

// The CPUs local rank `local_rank` is bound to; empty: not bound. `cpus_per_task` 0: -c not
// given. An error when the topology cannot serve the policy (no cores, a CPU the node does not
// have, more ranks of N CPUs than it has CPUs).
Result<std::vector<int>> cpus_for(const CpuBind& bind, const Topology& topology, int local_rank,
                                  int cpus_per_task = 0);

// The NUMA node (its OS number) holding the first of `cpus`, or -1: unbound, or not known.
int numa_of(const Topology& topology, const std::vector<int>& cpus);

// "0,2,5": CPU numbers as lattice-rank-exec's --cpus and the launcher's -v take them.
std::string cpu_list(const std::vector<int>& cpus);

// How many CPUs this process may run on (its affinity mask), what its children inherit.
size_t usable_cpus();

}  // namespace lattice::proc
