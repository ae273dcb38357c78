// ConnectTally: the head's count of the nodes entering a PMIx collective, and participant_nodes
// (pmix_procs.hpp), without a loop.
#include "agent/connect_tally.hpp"

#include <doctest/doctest.h>

#include "agent/pmix_procs.hpp"

namespace lattice::agent {
namespace {

using wire::CollectiveKind;
using wire::CollectiveProc;

LaunchSpec spec_of() {
  LaunchSpec spec;
  spec.launch_id = "L";
  spec.world_size = 4;
  spec.rank_nodes = {0, 0, 1, 2};
  return spec;
}

}  // namespace

TEST_CASE("participants resolve to their nodes; a wildcard to every node of the namespace") {
  LaunchSpec spec = spec_of();
  auto nodes_of = launch_proc_nodes(spec);
  auto some = participant_nodes({{"lattice.L", 0}, {"lattice.L", 1}, {"lattice.L", 3}}, nodes_of);
  REQUIRE(some);
  CHECK(some.value() == std::set<int>{0, 2});
  auto all = participant_nodes({{"lattice.L", wire::kEveryRank}}, nodes_of);
  REQUIRE(all);
  CHECK(all.value() == std::set<int>{0, 1, 2});
  CHECK_FALSE(participant_nodes({{"lattice.other", 0}}, nodes_of));  // spawned later: not yet
  CHECK_FALSE(participant_nodes({{"lattice.L", 4}}, nodes_of));
  CHECK_FALSE(participant_nodes({}, nodes_of));
}

TEST_CASE("a collective completes when every participating node entered, all answered at once") {
  ConnectTally tally;
  std::vector<CollectiveProc> procs{{"lattice.L", 3}, {"lattice.L", 0}};
  CHECK(tally.arrive(1, CollectiveKind::fence, procs, {0, 2}, 2, "b2", 1000).empty());
  CHECK(tally.open() == 1);
  // The same procs in another order are the same collective.
  auto done = tally.arrive(2, CollectiveKind::fence, {{"lattice.L", 0}, {"lattice.L", 3}}, {0, 2},
                           0, "b0", 1000);
  REQUIRE(done.size() == 2);
  for (auto& answer : done) {
    REQUIRE(answer.result.ok());
    CHECK(answer.result->data == "b0b2");  // every node's data, by node
    CHECK(answer.result->context_id == 0u);
  }
  CHECK(tally.open() == 0);
}

TEST_CASE("a node outside the collective, or entering twice, is refused at once") {
  ConnectTally tally;
  std::vector<CollectiveProc> procs{{"lattice.L", 0}, {"lattice.L", 2}};
  auto outside = tally.arrive(1, CollectiveKind::connect, procs, {0, 1}, 2, "", 1000);
  REQUIRE(outside.size() == 1);
  CHECK_FALSE(outside[0].result.ok());
  CHECK(tally.arrive(2, CollectiveKind::connect, procs, {0, 1}, 0, "", 1000).empty());
  auto twice = tally.arrive(3, CollectiveKind::connect, procs, {0, 1}, 0, "", 1000);
  REQUIRE(twice.size() == 1);
  CHECK(twice[0].id == 3);
  CHECK_FALSE(twice[0].result.ok());
  // A connect and a disconnect over the same procs are different collectives.
  CHECK(tally.arrive(4, CollectiveKind::disconnect, procs, {0, 1}, 1, "", 1000).empty());
  CHECK(tally.open() == 2);
}

TEST_CASE("a collective that cannot complete fails for every node that entered it") {
  ConnectTally tally;
  std::vector<CollectiveProc> procs{{"lattice.L", wire::kEveryRank}};
  CHECK(tally.arrive(1, CollectiveKind::connect, procs, {0, 1, 2}, 0, "", 500).empty());
  CHECK(tally.arrive(2, CollectiveKind::connect, procs, {0, 1, 2}, 1, "", 900).empty());
  CHECK(tally.next_deadline() == 500u);  // the first entry's
  auto name = [](int node) { return "n" + std::to_string(node + 1); };
  CHECK(tally.expire(499, name).empty());
  auto expired = tally.expire(500, name);
  REQUIRE(expired.size() == 2);
  for (auto& answer : expired) {
    REQUIRE_FALSE(answer.result.ok());
    CHECK(answer.result.error().message.find("waiting for node(s) n3") != std::string::npos);
  }
  CHECK(tally.open() == 0);
  // A lost node, and the launch's end, fail what is open.
  CHECK(tally.arrive(3, CollectiveKind::connect, procs, {0, 1, 2}, 0, "", 500).empty());
  CHECK(tally.node_lost(1, "node n2 lost").size() == 1);
  CHECK(tally.arrive(4, CollectiveKind::connect, procs, {0, 1, 2}, 0, "", 500).empty());
  CHECK(tally.drop_all("ended").size() == 1);
  CHECK(tally.open() == 0);
}

TEST_CASE("open collectives are bounded") {
  ConnectTally tally;
  for (int i = 0; i < static_cast<int>(kMaxOpenCollectives); ++i)
    REQUIRE(tally
                .arrive(static_cast<ConnectTally::Id>(i), CollectiveKind::connect,
                        {{"lattice.L", i}}, {0, 1}, 0, "", 1000)
                .empty());
  auto refused =
      tally.arrive(9999, CollectiveKind::connect, {{"lattice.L", 100000}}, {0, 1}, 0, "", 1000);
  REQUIRE(refused.size() == 1);
  CHECK_FALSE(refused[0].result.ok());
}

TEST_CASE("groups: each name its own collective, each construction its own context id") {
  ConnectTally tally;
  std::vector<CollectiveProc> procs{{"lattice.L", wire::kEveryRank}};
  const auto construct = CollectiveKind::group_construct;
  CHECK(tally.arrive(1, construct, procs, {0, 1}, 0, "e0", 1000, "g1").empty());
  CHECK(tally.arrive(2, construct, procs, {0, 1}, 0, "e0", 1000, "g2").empty());  // not g1's
  CHECK(tally.open() == 2);
  auto g1 = tally.arrive(3, construct, procs, {0, 1}, 1, "e1", 1000, "g1");
  auto g2 = tally.arrive(4, construct, procs, {0, 1}, 1, "e1", 1000, "g2");
  REQUIRE(g1.size() == 2);
  REQUIRE(g2.size() == 2);
  for (auto& answer : g1) {
    REQUIRE(answer.result.ok());
    CHECK(answer.result->data == "e0e1");
    CHECK(answer.result->context_id == g1[0].result->context_id);
  }
  CHECK(g1[0].result->context_id != 0u);
  CHECK(g2[0].result->context_id == g2[1].result->context_id);
  CHECK(g2[0].result->context_id != g1[0].result->context_id);
  CHECK(tally.arrive(5, CollectiveKind::group_destruct, procs, {0, 1}, 0, "", 1000, "g1").empty());
  auto destructed =
      tally.arrive(6, CollectiveKind::group_destruct, procs, {0, 1}, 1, "", 1000, "g1");
  REQUIRE(destructed.size() == 2);
  CHECK(destructed[0].result->context_id == 0u);
}

}  // namespace lattice::agent
