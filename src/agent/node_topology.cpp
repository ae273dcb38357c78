#include "agent/node_topology.hpp"

#include <hwloc.h>

#include <cstdio>
#include <string>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {
namespace {

// The OS numbers of the allowed CPUs (PUs) under `object`.
std::vector<int> cpus_of(hwloc_topology_t topology, hwloc_obj_t object) {
  std::vector<int> out;
  if (!object->cpuset) return out;
  hwloc_bitmap_t set = hwloc_bitmap_dup(object->cpuset);
  hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topology));
  int cpu;
  hwloc_bitmap_foreach_begin(cpu, set) out.push_back(cpu);
  hwloc_bitmap_foreach_end();
  hwloc_bitmap_free(set);
  return out;
}

std::vector<hwloc_obj_t> objects(hwloc_topology_t topology, hwloc_obj_type_t type) {
  std::vector<hwloc_obj_t> out;
  int n = hwloc_get_nbobjs_by_type(topology, type);
  for (int i = 0; i < n; ++i)
    out.push_back(hwloc_get_obj_by_type(topology, type, static_cast<unsigned>(i)));
  return out;
}

std::vector<std::vector<int>> groups(hwloc_topology_t topology, hwloc_obj_type_t type) {
  std::vector<std::vector<int>> out;
  for (hwloc_obj_t object : objects(topology, type))
    if (auto cpus = cpus_of(topology, object); !cpus.empty()) out.push_back(std::move(cpus));
  return out;
}

proc::Topology cpu_topology(hwloc_topology_t topology) {
  proc::Topology out;
  for (const auto& pu : groups(topology, HWLOC_OBJ_PU)) out.pus.push_back(pu.front());
  out.cores = groups(topology, HWLOC_OBJ_CORE);
  out.sockets = groups(topology, HWLOC_OBJ_PACKAGE);
  for (hwloc_obj_t node : objects(topology, HWLOC_OBJ_NUMANODE))
    if (auto cpus = cpus_of(topology, node); !cpus.empty())
      out.numa.push_back(proc::NumaNode{static_cast<int>(node->os_index), std::move(cpus)});
  return out;
}

// The NUMA node an I/O device hangs off, when it is one node's (not the whole machine's).
int numa_of(hwloc_topology_t topology, hwloc_obj_t device) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, device);
  if (!ancestor || !ancestor->nodeset || hwloc_bitmap_weight(ancestor->nodeset) != 1) return -1;
  return hwloc_bitmap_first(ancestor->nodeset);
}

// What names a device's vendor: OpenCL's GPUVendor, else its PCI device's vendor id.
std::string vendor_of(hwloc_obj_t device) {
  if (const char* vendor = hwloc_obj_get_info_by_name(device, "GPUVendor")) return vendor;
  for (hwloc_obj_t up = device->parent; up; up = up->parent)
    if (up->type == HWLOC_OBJ_PCI_DEVICE) {
      char id[16];
      std::snprintf(id, sizeof id, "0x%04x", up->attr->pcidev.vendor_id);
      return id;
    }
  return "";
}

std::vector<proc::GpuDevice> gpu_devices(hwloc_topology_t topology) {
  std::vector<proc::GpuDevice> out;
  for (hwloc_obj_t device = hwloc_get_next_osdev(topology, nullptr); device;
       device = hwloc_get_next_osdev(topology, device)) {
    auto type = device->attr->osdev.type;
    if ((type != HWLOC_OBJ_OSDEV_GPU && type != HWLOC_OBJ_OSDEV_COPROC) || !device->subtype ||
        !device->name)
      continue;
    out.push_back(proc::GpuDevice{device->subtype, device->name, vendor_of(device),
                                  numa_of(topology, device)});
  }
  return out;
}

}  // namespace

NodeHardware load_hardware() {
  NodeHardware out;
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) {
    out.topology = make_error("hwloc: cannot initialise");
    return out;
  }
  // GPUs are OS devices under PCI devices, which hwloc leaves out unless asked.
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    out.topology = make_error("hwloc: cannot read this node's topology");
    return out;
  }
  out.topology = cpu_topology(topology);
  out.gpus = gpu_devices(topology);
  // Kept, never destroyed: destroying the last topology unloads hwloc's components, and the pci
  // one's libpciaccess leaves what it allocated (about 1 KB, once) in the unloaded library, which
  // LeakSanitizer then reports on every agent's exit. Kept, it stays reachable.
  static hwloc_topology_t kept = nullptr;
  if (kept) hwloc_topology_destroy(kept);
  kept = topology;
  return out;
}

std::vector<proc::Gpu> node_gpus(const NodeHardware& hardware,
                                 const std::vector<proc::Gpu>& configured) {
  auto found = proc::gpus_from_devices(hardware.gpus);
  if (found.empty()) {
    if (!configured.empty())
      LAT_LOG(info, "agent", "GPUs from the configuration: ", proc::describe_gpus(configured));
    return proc::sorted_gpus(configured);
  }
  LAT_LOG(info, "agent", "GPUs found by hwloc: ", proc::describe_gpus(found));
  if (!configured.empty())
    LAT_LOG(warn, "agent", "the configuration's gpus list is set aside: hwloc sees this node's");
  return found;
}

}  // namespace lattice::agent
