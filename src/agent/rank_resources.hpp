// What each local rank of a launch gets of this node: its CPUs (-c, --cpu-bind) and its GPUs'
// variables (--gpus-per-task, --gpus-per-node, --gpu-bind), or why the node refuses the launch
// before any rank starts. The rules are proc/cpu_binding.hpp's and proc/gpus.hpp's; this
// applies them to the node the launch runs on (the agent's CPUs, or its allocation's).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"

namespace lattice::agent {

// What this node offers a launch.
struct NodeResources {
  std::string_view node_id;
  // hwloc's view of the node (read once at start), or why there is none.
  const Result<proc::Topology>* topology = nullptr;
  std::vector<int> launch_cpus;  // the allocation's CPUs; empty: all the agent may use
  size_t agent_cpus = 0;         // how many the agent may use (when there is no topology)
  const std::vector<proc::Gpu>* gpus = nullptr;  // the node's, in proc::sorted_gpus order
};

struct RankResources {
  std::vector<int> cpus;  // empty: not bound
  std::vector<std::pair<std::string, std::string>> gpu_env;
};

// One entry per local rank, in local-rank order.
Result<std::vector<RankResources>> rank_resources(const LaunchSpec& spec, size_t local_ranks,
                                                  const NodeResources& node);

}  // namespace lattice::agent
