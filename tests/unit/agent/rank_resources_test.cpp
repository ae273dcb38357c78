// What each local rank gets of the node, as the agent works it out before any rank starts: the
// fit of -c against the launch's CPUs (the agent's, or its allocation's), the binding over the
// node's topology, and GPUs by the NUMA node of each rank's CPUs.
#include "agent/rank_resources.hpp"

#include <doctest/doctest.h>

namespace lattice::agent {
namespace {

// Two NUMA nodes of two single-threaded cores each.
const Result<proc::Topology> kTopology = [] {
  proc::Topology t;
  t.pus = {0, 1, 2, 3};
  t.cores = {{0}, {1}, {2}, {3}};
  t.sockets = {{0, 1, 2, 3}};
  t.numa = {{0, {0, 1}}, {1, {2, 3}}};
  return Result<proc::Topology>(t);
}();
const std::vector<proc::Gpu> kGpus = {{proc::GpuVendor::nvidia, 0, 1},
                                      {proc::GpuVendor::nvidia, 1, 0}};

LaunchSpec spec_of(int cpus_per_task, const std::string& bind) {
  LaunchSpec spec;
  spec.cpus_per_task = cpus_per_task;
  spec.cpu_bind = *proc::parse_cpu_bind(bind);
  return spec;
}

NodeResources node(std::vector<int> launch_cpus = {}) {
  return NodeResources{"n1", &kTopology, std::move(launch_cpus), 4, &kGpus};
}

}  // namespace

TEST_CASE("-c: ranks bound to CPUs of their own, refused beyond the launch's CPUs") {
  auto got = rank_resources(spec_of(2, "threads"), 2, node());
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK((*got)[0].cpus == std::vector<int>{0, 1});
  CHECK((*got)[1].cpus == std::vector<int>{2, 3});
  CHECK((*got)[0].gpu_env.empty());
  auto refused = rank_resources(spec_of(2, "threads"), 3, node());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "node n1: 3 ranks of 2 CPUs (-c 2) need 6 CPUs, but launches there may use 4");
  // In an allocation of CPUs 1 and 3: only those count and are bound to.
  got = rank_resources(spec_of(1, "threads"), 2, node({3, 1}));
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK((*got)[0].cpus == std::vector<int>{1});
  CHECK((*got)[1].cpus == std::vector<int>{3});
  CHECK(rank_resources(spec_of(2, "none"), 2, node({1, 3})).error().message ==
        "node n1: 2 ranks of 2 CPUs (-c 2) need 4 CPUs, but launches there may use 2");
  CHECK(rank_resources(spec_of(1, "map_cpu:0"), 1, node({1, 3})).error().message ==
        "--cpu-bind on n1: map_cpu names CPU 0, which this node does not have (or launches may "
        "not use)");
}

TEST_CASE("without a topology the fit counts the agent's CPUs and binding is refused") {
  const Result<proc::Topology> none = make_error("hwloc: cannot read this node's topology");
  NodeResources bare{"n1", &none, {}, 2, nullptr};
  CHECK(rank_resources(spec_of(1, "none"), 2, bare));
  CHECK(rank_resources(spec_of(1, "none"), 3, bare).error().message.find("may use 2") !=
        std::string::npos);
  CHECK(rank_resources(spec_of(0, "cores"), 1, bare).error().message ==
        "--cpu-bind on n1: hwloc: cannot read this node's topology");
}

TEST_CASE("GPUs go by the NUMA node of each rank's CPUs under closest") {
  LaunchSpec spec = spec_of(2, "threads");
  spec.gpus.per_task = 1;
  REQUIRE(proc::parse_gpu_bind("closest", spec.gpus));
  auto got = rank_resources(spec, 2, node());
  REQUIRE_MESSAGE(got, got.error().message);
  using Env = std::vector<std::pair<std::string, std::string>>;
  CHECK((*got)[0].gpu_env == Env{{"CUDA_VISIBLE_DEVICES", "1"}});  // NUMA 0's
  CHECK((*got)[1].gpu_env == Env{{"CUDA_VISIBLE_DEVICES", "0"}});
  spec.gpus.per_task = 2;
  CHECK(rank_resources(spec, 2, node()).error().message ==
        "node n1 has 2 GPUs (nvidia 0-1): 2 ranks of 2 GPUs (--gpus-per-task 2) need 4");
  NodeResources no_gpus = node();
  no_gpus.gpus = nullptr;
  spec.gpus.per_task = 1;
  CHECK(rank_resources(spec, 1, no_gpus).error().message.find("node n1 has no GPUs") == 0);
}

}  // namespace lattice::agent
