#include "agent/node_topology.hpp"

#include <hwloc.h>

#include "base/strings.hpp"

namespace lattice::agent {
namespace {

// The OS numbers of the allowed CPUs (PUs) under `object`.
std::vector<int> cpus_of(hwloc_topology_t topology, hwloc_obj_t object) {
  std::vector<int> out;
  hwloc_bitmap_t set = hwloc_bitmap_dup(object->cpuset);
  hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topology));
  int cpu;
  hwloc_bitmap_foreach_begin(cpu, set) out.push_back(cpu);
  hwloc_bitmap_foreach_end();
  hwloc_bitmap_free(set);
  return out;
}

std::vector<std::vector<int>> groups(hwloc_topology_t topology, hwloc_obj_type_t type) {
  std::vector<std::vector<int>> out;
  int n = hwloc_get_nbobjs_by_type(topology, type);
  for (int i = 0; i < n; ++i) {
    auto cpus = cpus_of(topology, hwloc_get_obj_by_type(topology, type, static_cast<unsigned>(i)));
    if (!cpus.empty()) out.push_back(std::move(cpus));
  }
  return out;
}

}  // namespace

Result<proc::Topology> load_topology() {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return make_error("hwloc: cannot initialise");
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return make_error("hwloc: cannot read this node's topology");
  }
  proc::Topology out{groups(topology, HWLOC_OBJ_CORE), groups(topology, HWLOC_OBJ_PACKAGE)};
  hwloc_topology_destroy(topology);
  return out;
}

}  // namespace lattice::agent
