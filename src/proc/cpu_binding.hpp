// CPU binding as srun's --cpu-bind and mpiexec's -bind-to mean it: none (the default), each
// rank to one core (round robin over the node's cores by local rank), to one socket, or to the
// CPUs of an explicit map_cpu list. Pure: the node's topology comes in as lists of CPU numbers
// (the agent reads it through hwloc: agent/node_topology.hpp); the result is the CPU list
// lattice-rank-exec binds to before it execs the rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

// The node as binding sees it: the OS numbers of the CPUs (hardware threads) of each core and
// of each socket, in hwloc's order.
struct Topology {
  std::vector<std::vector<int>> cores;
  std::vector<std::vector<int>> sockets;
};

// CPU numbers a binding may name are below this.
inline constexpr int kMaxCpus = 1024;

struct CpuBind {
  enum class Kind { none, cores, sockets, map_cpu };
  Kind kind = Kind::none;
  std::vector<int> map;  // map_cpu's list, by local rank (round robin)
};

// "none", "cores", "sockets" or "map_cpu:0,2,..." (--cpu-bind; "" is none). The launch request
// carries the parsed form (schema CpuBinding).
Result<CpuBind> parse_cpu_bind(std::string_view text);

// The CPUs local rank `local_rank` is bound to; empty: not bound. An error when the topology
// cannot serve the policy (no cores, a map_cpu CPU the node does not have).
// "0,2,5": CPU numbers as lattice-rank-exec's --cpus and the launcher's -v take them.
std::string cpu_list(const std::vector<int>& cpus);
Result<std::vector<int>> cpus_for(const CpuBind& bind, const Topology& topology, int local_rank);

// How many CPUs this process may run on (its affinity mask), what its children inherit.
size_t usable_cpus();

}  // namespace lattice::proc
