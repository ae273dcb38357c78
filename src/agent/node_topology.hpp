// This node's CPU topology, read once through hwloc (never by parsing /proc by hand), as the
// lists proc/cpu_binding.hpp binds to. Only CPUs this process may run on count. The agent's
// only use of hwloc: the launcher and the binding rules need none of it.
#pragma once

#include "base/result.hpp"
#include "proc/cpu_binding.hpp"

namespace lattice::agent {

Result<proc::Topology> load_topology();

}  // namespace lattice::agent
