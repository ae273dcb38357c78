// --cpu-bind's rules over a made-up node: two sockets of two cores of two hardware threads.
#include "proc/cpu_binding.hpp"

#include <doctest/doctest.h>

namespace lattice::proc {
namespace {

Topology two_sockets() {
  return Topology{{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, {{0, 1, 4, 5}, {2, 3, 6, 7}}};
}

std::vector<int> bound(const std::string& text, int local_rank) {
  auto bind = parse_cpu_bind(text);
  REQUIRE(bind);
  auto cpus = cpus_for(*bind, two_sockets(), local_rank);
  REQUIRE(cpus);
  return *cpus;
}

}  // namespace

TEST_CASE("policies round-robin over cores and sockets by local rank, or follow map_cpu") {
  CHECK(bound("none", 3).empty());
  CHECK(bound("", 0).empty());
  CHECK(bound("cores", 0) == std::vector<int>{0, 4});
  CHECK(bound("cores", 3) == std::vector<int>{3, 7});
  CHECK(bound("cores", 5) == std::vector<int>{1, 5});  // wraps around
  CHECK(bound("sockets", 1) == std::vector<int>{2, 3, 6, 7});
  CHECK(bound("sockets", 2) == std::vector<int>{0, 1, 4, 5});
  CHECK(bound("map_cpu:7,0", 0) == std::vector<int>{7});
  CHECK(bound("map_cpu:7,0", 3) == std::vector<int>{0});
}

TEST_CASE("bad text, and what cannot be served, is an error") {
  CHECK(parse_cpu_bind("map_cpu:3,1,2")->map == std::vector<int>{3, 1, 2});
  for (const char* bad : {"core", "map_cpu:", "map_cpu:a", "map_cpu:-1", "map_cpu:1,,2", "all"})
    CHECK_MESSAGE(!parse_cpu_bind(bad), bad);
  CHECK_FALSE(cpus_for(*parse_cpu_bind("map_cpu:9"), two_sockets(), 0));  // no CPU 9 here
  CHECK_FALSE(cpus_for(*parse_cpu_bind("cores"), Topology{}, 0));
}

}  // namespace lattice::proc

TEST_CASE("a CPU list reads as lattice-rank-exec's --cpus takes it") {
  CHECK(lattice::proc::cpu_list({0, 2, 5}) == "0,2,5");
  CHECK(lattice::proc::cpu_list({7}) == "7");
  CHECK(lattice::proc::cpu_list({}).empty());
}
