// This node's CPU topology and GPUs, read once through hwloc (never by parsing /proc or /sys by
// hand): the lists proc/cpu_binding.hpp binds to, and the GPU OS devices proc/gpus.hpp counts.
// Only CPUs this process may run on count. The agent's only use of hwloc: the launcher and the
// binding and GPU rules need none of it.
#pragma once

#include <vector>

#include "base/result.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"

namespace lattice::agent {

struct NodeHardware {
  Result<proc::Topology> topology = proc::Topology{};
  std::vector<proc::GpuDevice> gpus;  // GPU and co-processor OS devices (CUDA, OpenCL, ...)
};

NodeHardware load_hardware();

// The node's GPUs (proc::sorted_gpus order): those hwloc sees, or where it sees none,
// `configured` (the configuration's gpus list); the log says which, and when the list is set
// aside.
std::vector<proc::Gpu> node_gpus(const NodeHardware& hardware,
                                 const std::vector<proc::Gpu>& configured);

}  // namespace lattice::agent
