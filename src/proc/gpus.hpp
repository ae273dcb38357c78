// GPUs per rank, as srun's --gpus-per-task, --gpus-per-node and --gpu-bind mean them: the node's
// GPUs (found by hwloc, agent/node_topology.hpp, or listed in the agent's configuration), which
// of them each local rank gets, and the variables that show a rank its GPUs
// (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK). Pure.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

enum class GpuVendor { nvidia, amd, intel };
std::string_view gpu_vendor_name(GpuVendor vendor);
Result<GpuVendor> parse_gpu_vendor(std::string_view name);

// One GPU of the node: `index` is its number in its vendor's runtime (what CUDA_VISIBLE_DEVICES,
// ROCR_VISIBLE_DEVICES or ZE_AFFINITY_MASK name); `numa` its NUMA node's OS number, -1 unknown.
struct Gpu {
  GpuVendor vendor = GpuVendor::nvidia;
  int index = 0;
  int numa = -1;
  bool operator==(const Gpu& o) const {
    return vendor == o.vendor && index == o.index && numa == o.numa;
  }
};

// GPUs one node may hold, GPUs a launch may ask for on one, and an index's bound.
inline constexpr int kMaxGpus = 256;

// The node's GPUs in the order ranks get them, and map_gpu numbers them: by vendor, then index.
std::vector<Gpu> sorted_gpus(std::vector<Gpu> gpus);
// "4 GPUs (nvidia 0-3)", "2 GPUs (nvidia 0, amd 0)", "no GPUs".
std::string describe_gpus(const std::vector<Gpu>& gpus);

// A GPU OS device as hwloc shows it: the backend that found it (its subtype: CUDA, NVML, RSMI,
// LevelZero, OpenCL), its name there (cuda0, nvml0, rsmi0, ze0, opencl0d1), what names its
// vendor (OpenCL's GPUVendor, else the PCI vendor's name or id), its NUMA node (-1 unknown).
struct GpuDevice {
  std::string backend;
  std::string name;
  std::string vendor;
  int numa = -1;
};
// The node's GPUs from hwloc's devices, each counted once: for each vendor the devices of the
// best backend that sees any (nvidia: CUDA, NVML, OpenCL; amd: RSMI, OpenCL; intel: LevelZero,
// OpenCL), numbered as that backend numbers them. Devices of no known backend or vendor (a
// display's DRM card) are left out.
std::vector<Gpu> gpus_from_devices(const std::vector<GpuDevice>& devices);

// What a launch asks for (--gpus-per-task, --gpus-per-node, --gpu-bind). Binding: automatic
// (srun's default) gives each rank its own GPUs with --gpus-per-task, and every rank the
// node's share with --gpus-per-node; none shows every rank all the GPUs the launch takes on
// the node; closest prefers GPUs on the rank's NUMA node; map_gpu gives local rank i GPU
// map[i % n], by its place in the node's order (sorted_gpus).
struct GpuRequest {
  enum class Bind { automatic, none, closest, map_gpu };
  int per_task = 0;
  int per_node = 0;
  Bind bind = Bind::automatic;
  std::vector<int> map;
  bool any() const { return per_task > 0 || per_node > 0 || bind == Bind::map_gpu; }
};

// --gpu-bind's value: closest, none, map_gpu:LIST.
Status parse_gpu_bind(std::string_view text, GpuRequest& request);
// --gpus-per-task/--gpus-per-node's value: 1 .. kMaxGpus.
Result<int> parse_gpu_count(std::string_view flag, std::string_view text);
// The options taken together: what cannot be combined, or a binding with no GPUs to bind.
Status check_gpu_request(const GpuRequest& request);

// Each local rank's GPUs, for ranks on NUMA nodes `rank_numa` (-1: not known) on a node
// holding `gpus` (sorted_gpus order), or why the node cannot meet the request (naming `node`
// and what it holds).
Result<std::vector<std::vector<Gpu>>> assign_gpus(const GpuRequest& request,
                                                  const std::vector<Gpu>& gpus,
                                                  const std::vector<int>& rank_numa,
                                                  std::string_view node);

// The variables that show a rank its GPUs: one for each vendor it has GPUs of.
std::vector<std::pair<std::string, std::string>> gpu_environment(const std::vector<Gpu>& gpus);

}  // namespace lattice::proc
