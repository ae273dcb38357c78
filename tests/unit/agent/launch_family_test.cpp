// A launch's spawned launches as its nodes know them: where their ranks run, and ProcNodes over
// the parent and its children, which the head checks names and tallies collectives against.
#include "agent/launch_family.hpp"

#include <doctest/doctest.h>

namespace lattice::agent {
namespace {

LaunchSpec parent() {
  LaunchSpec spec;
  spec.launch_id = "P";
  spec.world_size = 3;
  spec.rank_nodes = {0, 1, 2};
  spec.peers = PeerTable({{"n0", "127.0.0.1", 1}, {"n1", "127.0.0.2", 1}, {"n2", "127.0.0.3", 1}});
  return spec;
}

TEST_CASE("a child's ranks are placed on the parent's nodes; the parent's own stay as they are") {
  LaunchSpec spec = parent();
  LaunchFamily family(spec);
  REQUIRE(family.add("C", {2, 2, 1}));
  auto nodes_of = family.proc_nodes();
  CHECK(nodes_of("lattice.C", 0).value() == std::set<int>{2});
  CHECK(nodes_of("lattice.C", 2).value() == std::set<int>{1});
  CHECK(nodes_of("lattice.C", wire::kEveryRank).value() == std::set<int>{1, 2});
  CHECK(nodes_of("lattice.P", 0).value() == std::set<int>{0});
  CHECK(nodes_of("lattice.P", wire::kEveryRank).value() == std::set<int>{0, 1, 2});
  CHECK_FALSE(nodes_of("lattice.C", 3));
  CHECK_FALSE(nodes_of("lattice.C", -2));
  CHECK_FALSE(nodes_of("lattice.X", 0));  // another user's launch is nobody's child here
  REQUIRE(family.layout_of("lattice.C"));
  CHECK(*family.layout_of("lattice.C") == std::vector<int>{2, 2, 1});
  CHECK_FALSE(family.layout_of("lattice.P"));
}

TEST_CASE("a layout naming no node of the parent, no rank, or a known child is refused") {
  LaunchSpec spec = parent();
  LaunchFamily family(spec);
  auto beyond = family.add("C", {0, 3});
  REQUIRE_FALSE(beyond);
  CHECK(beyond.error().message.find("names node 3") != std::string::npos);
  CHECK_FALSE(family.layout_of("lattice.C"));
  CHECK_FALSE(family.add("C", {}));
  REQUIRE(family.add("C", {0}));
  CHECK_FALSE(family.add("C", {1}));
  CHECK(*family.layout_of("lattice.C") == std::vector<int>{0});
}

TEST_CASE("at most kMaxSpawnedLaunches children are remembered") {
  LaunchSpec spec = parent();
  LaunchFamily family(spec);
  for (size_t i = 0; i < kMaxSpawnedLaunches; ++i) REQUIRE(family.add(std::to_string(i), {0}));
  CHECK_FALSE(family.add("one-more", {0}));
}

}  // namespace
}  // namespace lattice::agent
