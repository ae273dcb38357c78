#include "launcher/layout.hpp"

#include <doctest/doctest.h>

#include "wire/rank_layout.hpp"

using namespace lattice::launcher;

namespace {
Layout layout_of(int n, int nodes, int tpn, Distribution d = Distribution::block, int agents = 0) {
  LaunchOptions o;
  o.apps.resize(1);
  o.apps[0].ntasks = n;
  o.nodes = nodes;
  o.tasks_per_node = tpn;
  o.distribution = d;
  auto l = make_layout(o, agents);
  REQUIRE_MESSAGE(l, l.error().message);
  return l.value();
}
}  // namespace

TEST_CASE("layout: one node by default") {
  auto l = layout_of(4, 0, 0);
  CHECK(l.nodes == 1);
  CHECK(l.rank_nodes == std::vector<int>{0, 0, 0, 0});
}

TEST_CASE("layout: block with tasks per node, last node short") {
  auto l = layout_of(10, 4, 3);
  CHECK(l.rank_nodes == std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3});
}

TEST_CASE("layout: balanced block when tasks per node is not given") {
  auto l = layout_of(10, 4, 0);
  CHECK(l.rank_nodes == std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3});
}

TEST_CASE("layout: cyclic") {
  auto l = layout_of(5, 2, 0, Distribution::cyclic);
  CHECK(l.rank_nodes == std::vector<int>{0, 1, 0, 1, 0});
}

TEST_CASE("layout: nodes derived from tasks per node, ntasks from nodes") {
  CHECK(layout_of(256, 0, 4, Distribution::block, 64).nodes == 64);
  CHECK(layout_of(0, 2, 3).ntasks == 6);
  CHECK(layout_of(3, 0, 0, Distribution::block, 8).nodes == 3);
}

TEST_CASE("layout: impossible requests are refused") {
  LaunchOptions o;
  o.apps.resize(1);
  o.apps[0].ntasks = 10;
  o.nodes = 2;
  o.tasks_per_node = 4;
  CHECK_FALSE(make_layout(o, 0));  // 10 ranks do not fit 2 x 4
  o.tasks_per_node = 0;
  o.nodes = 11;
  CHECK_FALSE(make_layout(o, 0));  // nodes without ranks
  o.nodes = 3;
  CHECK_FALSE(make_layout(o, 2));  // more nodes than agents
  o.nodes = 4;
  o.tasks_per_node = 5;
  CHECK_FALSE(make_layout(o, 0));  // block of 5 fills only 2 of 4 nodes
}

TEST_CASE("layout: MPMD segments add up to one world laid out as one") {
  LaunchOptions o;
  o.apps.resize(2);
  o.apps[0].ntasks = 2;
  o.apps[1].ntasks = 3;
  o.nodes = 2;
  auto l = make_layout(o, 2);
  REQUIRE(l);
  CHECK(l->ntasks == 5);
  CHECK(l->rank_nodes == std::vector<int>{0, 0, 0, 1, 1});
  o.apps.resize(3);  // a segment without -n: one rank
  CHECK(make_layout(o, 2)->ntasks == 6);
}

TEST_CASE("every layout make_layout makes has a compact form of at most two blocks") {
  struct Case {
    int n, nodes, tpn;
    Distribution d;
  };
  for (const Case& c : {Case{16, 4, 0, Distribution::block}, Case{10, 4, 0, Distribution::block},
                        Case{10, 4, 0, Distribution::cyclic}, Case{7, 0, 3, Distribution::block},
                        Case{256, 256, 0, Distribution::block}, Case{1, 1, 0, Distribution::block},
                        Case{9, 2, 5, Distribution::block}}) {
    Layout l = layout_of(c.n, c.nodes, c.tpn, c.d);
    auto compact = lattice::wire::compact_rank_layout(l.rank_nodes, l.nodes);
    REQUIRE(compact);
    CHECK((compact->cyclic || compact->blocks.size() <= 2));
    auto back = lattice::wire::expand_rank_layout(*compact, l.ntasks, l.nodes);
    REQUIRE_MESSAGE(back, back.error().message);
    CHECK(*back == l.rank_nodes);
  }
  // A layout no rule describes stays a list.
  CHECK(!lattice::wire::compact_rank_layout({1, 0}, 2));
  CHECK(!lattice::wire::compact_rank_layout({0, 0}, 2));  // node 1 without ranks
}

TEST_CASE("layout: -c lays ranks out by CPUs where a node's CPUs are known") {
  LaunchOptions o;
  o.apps.resize(1);
  o.apps[0].ntasks = 4;
  o.cpus_per_task = 2;
  // Nodes of 4 CPUs hold 2 ranks of 2: two nodes, as srun -n 4 -c 2 takes.
  auto l = make_layout(o, 0, 4);
  REQUIRE_MESSAGE(l, l.error().message);
  CHECK(l->nodes == 2);
  CHECK(l->rank_nodes == std::vector<int>{0, 0, 1, 1});
  CHECK(make_layout(o, 0, 2)->nodes == 4);
  CHECK(make_layout(o, 0, 3)->nodes == 4);  // one rank of 2 in 3 CPUs
  CHECK(make_layout(o, 0, 0)->nodes == 1);  // not known: the agents judge
  o.nodes = 1;
  CHECK(make_layout(o, 0, 4).error().message ==
        "4 ranks of 2 CPUs (-c 2) on one node need 8 CPUs, but a node has 4");
  o.nodes = 0;
  o.tasks_per_node = 3;
  CHECK_FALSE(make_layout(o, 0, 4));  // 3 ranks of 2 on a node of 4
  o.tasks_per_node = 0;
  o.cpus_per_task = 5;
  CHECK(make_layout(o, 0, 4).error().message ==
        "-c 5: a rank of 5 CPUs does not fit a node of 4 CPUs");
  o.cpus_per_task = 0;
  CHECK(make_layout(o, 0, 4)->nodes == 1);  // without -c, CPUs do not count
}
