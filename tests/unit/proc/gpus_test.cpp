// GPUs per rank: the node's GPUs from hwloc's devices, which GPUs each local rank gets under
// --gpus-per-task, --gpus-per-node and --gpu-bind, and the variables that show them.
#include "proc/gpus.hpp"

#include <doctest/doctest.h>

namespace lattice::proc {
namespace {

using Gpus = std::vector<Gpu>;
constexpr auto nv = GpuVendor::nvidia;
constexpr auto amd = GpuVendor::amd;
constexpr auto intel = GpuVendor::intel;

// Four NVIDIA GPUs, two on each of NUMA nodes 0 and 1.
Gpus four() { return {{nv, 0, 0}, {nv, 1, 0}, {nv, 2, 1}, {nv, 3, 1}}; }

GpuRequest per_task(int n, const std::string& bind = "") {
  GpuRequest r;
  r.per_task = n;
  if (!bind.empty()) REQUIRE(parse_gpu_bind(bind, r));
  return r;
}

GpuRequest per_node(int n, const std::string& bind = "") {
  GpuRequest r;
  r.per_node = n;
  if (!bind.empty()) REQUIRE(parse_gpu_bind(bind, r));
  return r;
}

// Each rank's GPU indexes.
std::vector<std::vector<int>> indexes(const GpuRequest& request, const Gpus& gpus,
                                      const std::vector<int>& numa) {
  auto got = assign_gpus(request, gpus, numa, "n1");
  REQUIRE_MESSAGE(got, (got ? "" : got.error().message));
  std::vector<std::vector<int>> out;
  for (const auto& rank : *got) {
    out.emplace_back();
    for (const Gpu& gpu : rank) out.back().push_back(gpu.index);
  }
  return out;
}

std::string refusal(const GpuRequest& request, const Gpus& gpus, size_t ranks) {
  auto got = assign_gpus(request, gpus, std::vector<int>(ranks, -1), "n1");
  REQUIRE_FALSE(got);
  return got.error().message;
}

using Each = std::vector<std::vector<int>>;

}  // namespace

TEST_CASE("--gpus-per-task: each rank its own GPUs, in order or closest first") {
  CHECK(indexes(per_task(1), four(), {-1, -1, -1, -1}) == Each{{0}, {1}, {2}, {3}});
  CHECK(indexes(per_task(2), four(), {-1, -1}) == Each{{0, 1}, {2, 3}});
  // closest: a rank on NUMA node 1 takes node 1's GPUs first.
  CHECK(indexes(per_task(1, "closest"), four(), {1, 0}) == Each{{2}, {0}});
  CHECK(indexes(per_task(2, "closest"), four(), {1, 1}) == Each{{2, 3}, {0, 1}});
  CHECK(indexes(per_task(1, "closest"), four(), {-1, -1}) == Each{{0}, {1}});  // unbound
  // none: every rank sees all the GPUs the launch takes here.
  CHECK(indexes(per_task(1, "none"), four(), {-1, -1}) == Each{{0, 1}, {0, 1}});
  CHECK(indexes(per_task(1), four(), {}) == Each{});
}

TEST_CASE("--gpus-per-node: every rank sees the node's share, or the closest of it") {
  CHECK(indexes(per_node(2), four(), {-1, -1, -1}) == Each{{0, 1}, {0, 1}, {0, 1}});
  CHECK(indexes(per_node(4, "closest"), four(), {1, 0, -1}) == Each{{2, 3}, {0, 1}, {0, 1, 2, 3}});
  // None of the share on the rank's node: all of it.
  CHECK(indexes(per_node(2, "closest"), four(), {1}) == Each{{0, 1}});
}

TEST_CASE("map_gpu: local rank i gets GPU map[i % n] by its place in the node's order") {
  GpuRequest r;
  REQUIRE(parse_gpu_bind("map_gpu:3,1", r));
  CHECK(indexes(r, four(), {-1, -1, -1}) == Each{{3}, {1}, {3}});
  Gpus mixed = sorted_gpus({{amd, 0, -1}, {nv, 5, -1}});
  CHECK(indexes(r, four(), {-1}) == Each{{3}});
  GpuRequest first;
  REQUIRE(parse_gpu_bind("map_gpu:1", first));
  auto got = assign_gpus(first, mixed, {-1}, "n1");
  REQUIRE(got);
  CHECK((*got)[0] == Gpus{{amd, 0, -1}});  // nvidia 5 is place 0, amd 0 place 1
}

TEST_CASE("what the node cannot meet is refused, naming the node and what it has") {
  CHECK(refusal(per_task(1), four(), 5) ==
        "node n1 has 4 GPUs (nvidia 0-3): 5 ranks of 1 GPU (--gpus-per-task 1) need 5");
  CHECK(refusal(per_task(3), four(), 2) ==
        "node n1 has 4 GPUs (nvidia 0-3): 2 ranks of 3 GPUs (--gpus-per-task 3) need 6");
  CHECK(refusal(per_node(5), four(), 1) ==
        "node n1 has 4 GPUs (nvidia 0-3): --gpus-per-node 5 asks for 5");
  CHECK(refusal(per_task(1), {}, 1) ==
        "node n1 has no GPUs: 1 rank of 1 GPU (--gpus-per-task 1) need 1");
  GpuRequest r;
  REQUIRE(parse_gpu_bind("map_gpu:4", r));
  CHECK(refusal(r, four(), 1) ==
        "node n1 has 4 GPUs (nvidia 0-3): --gpu-bind map_gpu names GPU 4 (they are numbered "
        "from 0)");
}

TEST_CASE("options that cannot go together, and bad values, are errors") {
  GpuRequest both = per_task(1);
  both.per_node = 1;
  CHECK(check_gpu_request(both).error().message ==
        "give --gpus-per-task or --gpus-per-node, not both");
  GpuRequest bare;
  REQUIRE(parse_gpu_bind("closest", bare));
  CHECK(check_gpu_request(bare).error().message ==
        "--gpu-bind closest needs --gpus-per-task or --gpus-per-node");
  GpuRequest map = per_task(2, "map_gpu:0");
  CHECK_FALSE(check_gpu_request(map));
  CHECK(check_gpu_request(per_task(1, "map_gpu:0")));
  CHECK_FALSE(check_gpu_request(per_node(1, "map_gpu:0")));
  GpuRequest r;
  for (const char* bad : {"", "single:1", "map_gpu:", "map_gpu:x", "map_gpu:256", "per_task:1"})
    CHECK_MESSAGE(!parse_gpu_bind(bad, r), bad);
  CHECK(*parse_gpu_count("--gpus-per-task", "2") == 2);
  for (const char* bad : {"0", "257", "-1", "a"})
    CHECK_MESSAGE(!parse_gpu_count("--gpus-per-task", bad), bad);
  CHECK(!GpuRequest{}.any());
}

TEST_CASE("a rank sees its GPUs through its vendors' variables") {
  CHECK(gpu_environment({{nv, 2, 0}, {nv, 0, 0}}) ==
        std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", "2,0"}});
  CHECK(gpu_environment({{amd, 1, 0}, {intel, 0, 0}, {nv, 3, 0}}) ==
        std::vector<std::pair<std::string, std::string>>{{"CUDA_VISIBLE_DEVICES", "3"},
                                                         {"ROCR_VISIBLE_DEVICES", "1"},
                                                         {"ZE_AFFINITY_MASK", "0"}});
  CHECK(gpu_environment({}).empty());
}

TEST_CASE("the node's GPUs from hwloc's OS devices, each once, numbered by its runtime") {
  // One NVIDIA GPU seen by CUDA, NVML and OpenCL; two AMD GPUs by RSMI and OpenCL; an Intel
  // GPU by OpenCL alone; a display's DRM card, which no runtime numbers.
  std::vector<GpuDevice> devices = {
      {"CUDA", "cuda0", "0x10de", 0},
      {"NVML", "nvml0", "0x10de", 0},
      {"OpenCL", "opencl0d0", "NVIDIA Corporation", 0},
      {"RSMI", "rsmi1", "0x1002", 1},
      {"RSMI", "rsmi0", "0x1002", 1},
      {"OpenCL", "opencl1d0", "Advanced Micro Devices, Inc.", 1},
      {"OpenCL", "opencl2d0", "Intel(R) Corporation", -1},
      {"", "card0", "0x1a03", -1},
      {"LevelZero", "ze0.1", "0x8086", -1},  // a sub-device
  };
  CHECK(gpus_from_devices(devices) == Gpus{{nv, 0, 0}, {amd, 0, 1}, {amd, 1, 1}, {intel, 0, -1}});
  // NVML where CUDA is not there; OpenCL's vendor from its PCI id when it gives no name.
  CHECK(gpus_from_devices({{"NVML", "nvml1", "", 0}, {"OpenCL", "opencl0d3", "0x8086", -1}}) ==
        Gpus{{nv, 1, 0}, {intel, 3, -1}});
  CHECK(gpus_from_devices({{"OpenCL", "opencl0d0", "Some Vendor", 0}}).empty());
  CHECK(gpus_from_devices({{"CUDA", "cudaX", "", 0}, {"CUDA", "cuda999", "", 0}}).empty());
  CHECK(describe_gpus(gpus_from_devices(devices)) == "4 GPUs (nvidia 0, amd 0-1, intel 0)");
  CHECK(describe_gpus({{nv, 0, 0}, {nv, 2, 0}, {nv, 3, 0}}) == "3 GPUs (nvidia 0,2-3)");
  CHECK(describe_gpus({{amd, 7, 0}}) == "1 GPU (amd 7)");
  CHECK(*parse_gpu_vendor("intel") == intel);
  CHECK_FALSE(parse_gpu_vendor("NVIDIA"));
}

}  // namespace lattice::proc
