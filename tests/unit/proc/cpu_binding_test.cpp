// --cpu-bind's and -c's rules over a made-up node: two sockets (each its own NUMA node) of two
// cores of two hardware threads; hwloc's order puts a core's threads together.
#include "proc/cpu_binding.hpp"

#include <doctest/doctest.h>

namespace lattice::proc {
namespace {

Topology two_sockets() {
  Topology t;
  t.pus = {0, 4, 1, 5, 2, 6, 3, 7};
  t.cores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  t.sockets = {{0, 1, 4, 5}, {2, 3, 6, 7}};
  t.numa = {{0, {0, 1, 4, 5}}, {1, {2, 3, 6, 7}}};
  return t;
}

std::vector<int> bound(const std::string& text, int local_rank, int cpus_per_task = 0) {
  auto bind = parse_cpu_bind(text);
  REQUIRE(bind);
  auto cpus = cpus_for(*bind, two_sockets(), local_rank, cpus_per_task);
  REQUIRE_MESSAGE(cpus, (cpus ? "" : cpus.error().message));
  return *cpus;
}

using Cpus = std::vector<int>;

}  // namespace

TEST_CASE("without -c, units go round robin by local rank, or map_cpu and mask_cpu name them") {
  CHECK(bound("none", 3).empty());
  CHECK(bound("", 0).empty());
  CHECK(bound("cores", 0) == Cpus{0, 4});
  CHECK(bound("cores", 3) == Cpus{3, 7});
  CHECK(bound("cores", 5) == Cpus{1, 5});  // wraps around
  CHECK(bound("sockets", 1) == Cpus{2, 3, 6, 7});
  CHECK(bound("sockets", 2) == Cpus{0, 1, 4, 5});
  CHECK(bound("threads", 1) == Cpus{4});  // a core's threads first
  CHECK(bound("threads", 9) == Cpus{4});
  CHECK(bound("ldoms", 1) == Cpus{2, 3, 6, 7});
  CHECK(bound("map_cpu:7,0", 0) == Cpus{7});
  CHECK(bound("map_cpu:7,0", 3) == Cpus{0});
  CHECK(bound("mask_cpu:0x3,c0", 0) == Cpus{0, 1});
  CHECK(bound("mask_cpu:0x3,c0", 1) == Cpus{6, 7});
  CHECK(bound("mask_cpu:0x3,c0", 2) == Cpus{0, 1});
}

TEST_CASE("with -c N each rank owns N CPUs in hwloc's order, bound to them or what holds them") {
  CHECK(bound("threads", 0, 2) == Cpus{0, 4});
  CHECK(bound("threads", 1, 2) == Cpus{1, 5});
  CHECK(bound("threads", 1, 3) == Cpus{2, 5, 6});   // CPUs 5, 2, 6: across two cores
  CHECK(bound("cores", 1, 3) == Cpus{1, 2, 5, 6});  // the two cores they lie in
  CHECK(bound("cores", 0, 1) == Cpus{0, 4});        // a core's threads are its ranks'
  CHECK(bound("sockets", 1, 2) == Cpus{0, 1, 4, 5});
  CHECK(bound("sockets", 2, 2) == Cpus{2, 3, 6, 7});
  CHECK(bound("sockets", 1, 3) == Cpus{0, 1, 2, 3, 4, 5, 6, 7});  // straddles both
  CHECK(bound("ldoms", 3, 2) == Cpus{2, 3, 6, 7});
  CHECK(bound("map_cpu:6", 1, 4) == Cpus{6});  // named outright, whatever -c says
  CHECK(bound("none", 1, 4).empty());
  // Beyond the node's CPUs: the agent refuses that launch before it binds anything.
  CHECK_FALSE(cpus_for(*parse_cpu_bind("threads"), two_sockets(), 2, 3));
  CHECK_FALSE(cpus_for(*parse_cpu_bind("threads"), two_sockets(), 4, 2));
}

TEST_CASE("ranks of -c CPUs fit a node or are refused, naming it and the numbers") {
  CHECK(check_cpus_fit(4, 2, 8, "n1"));
  CHECK(check_cpus_fit(1, 2, 2, "n1"));
  CHECK(check_cpus_fit(9, 0, 8, "n1"));  // -c not given: nothing to check
  auto refused = check_cpus_fit(2, 3, 4, "n7");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "node n7: 2 ranks of 3 CPUs (-c 3) need 6 CPUs, but launches there may use 4");
  CHECK(check_cpus_fit(1, 3, 2, "n1").error().message.find("1 rank of 3 CPUs") !=
        std::string::npos);
}

TEST_CASE("an allocation's CPUs: the topology keeps only them") {
  Topology t = restrict_to(two_sockets(), {2, 3, 6});
  CHECK(t.pus == Cpus{2, 6, 3});  // hwloc's order stays
  CHECK(t.cores == std::vector<Cpus>{{2, 6}, {3}});
  CHECK(t.sockets == std::vector<Cpus>{{2, 3, 6}});
  REQUIRE(t.numa.size() == 1);
  CHECK(t.numa[0].id == 1);
  CHECK(t.numa[0].cpus == Cpus{2, 3, 6});
  auto bind = parse_cpu_bind("threads");
  CHECK(*cpus_for(*bind, t, 0, 2) == Cpus{2, 6});
  CHECK_FALSE(cpus_for(*parse_cpu_bind("map_cpu:0"), t, 0));  // not the allocation's
}

TEST_CASE("a rank's NUMA node is that of its first CPU") {
  CHECK(numa_of(two_sockets(), {6, 7}) == 1);
  CHECK(numa_of(two_sockets(), {0}) == 0);
  CHECK(numa_of(two_sockets(), {}) == -1);    // unbound
  CHECK(numa_of(two_sockets(), {99}) == -1);  // not known
  CHECK(numa_of(Topology{}, {0}) == -1);
}

TEST_CASE("bad text, and what cannot be served, is an error") {
  CHECK(parse_cpu_bind("map_cpu:3,1,2")->map == Cpus{3, 1, 2});
  CHECK(parse_cpu_bind("mask_cpu:0X10")->masks == std::vector<Cpus>{{4}});
  CHECK(parse_cpu_bind("mask_cpu:8" + std::string(255, '0'))->masks == std::vector<Cpus>{{1023}});
  for (const char* bad : {"core", "map_cpu:", "map_cpu:a", "map_cpu:-1", "map_cpu:1,,2", "all",
                          "mask_cpu:", "mask_cpu:0", "mask_cpu:0x", "mask_cpu:xyz", "mask_cpu:1,,2",
                          "rank", "map_ldom:0"})
    CHECK_MESSAGE(!parse_cpu_bind(bad), bad);
  CHECK_FALSE(parse_cpu_bind("mask_cpu:1" + std::string(256, '0')));      // CPU 1024
  CHECK_FALSE(cpus_for(*parse_cpu_bind("map_cpu:9"), two_sockets(), 0));  // no CPU 9 here
  CHECK_FALSE(cpus_for(*parse_cpu_bind("mask_cpu:0x300"), two_sockets(), 0));
  CHECK_FALSE(cpus_for(*parse_cpu_bind("cores"), Topology{}, 0));
  CHECK_FALSE(cpus_for(*parse_cpu_bind("ldoms"), Topology{}, 0));
  CHECK(*parse_cpus_per_task("8") == 8);
  for (const char* bad : {"0", "-1", "1025", "two", ""})
    CHECK_MESSAGE(!parse_cpus_per_task(bad), bad);
}

}  // namespace lattice::proc

TEST_CASE("a CPU list reads as lattice-rank-exec's --cpus takes it") {
  CHECK(lattice::proc::cpu_list({0, 2, 5}) == "0,2,5");
  CHECK(lattice::proc::cpu_list({7}) == "7");
  CHECK(lattice::proc::cpu_list({}).empty());
}
