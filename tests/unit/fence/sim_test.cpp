// Whole trees of Reducers over the simulated network (fence_sim.hpp): consecutive fences under
// reordering and duplication, dropped and delayed messages, and large chunked stores.
#include <doctest/doctest.h>

#include "fence_sim.hpp"

using namespace lattice::fence;
using namespace lattice::fence::test;

namespace {

// Every node completed epochs 1..epochs with the expected store.
void check_all_completed(const Sim& sim, const SimOptions& o) {
  for (uint64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    CAPTURE(epoch);
    const KvList expected = expected_store(o, sim.tree(), epoch);
    for (int node = 0; node < o.nnodes; ++node) {
      CAPTURE(node);
      auto it = sim.completed[node].find(epoch);
      REQUIRE(it != sim.completed[node].end());
      CHECK(it->second == expected);
    }
  }
  for (const auto& reducer : sim.reducers) CHECK(reducer.completed_epoch() == o.epochs);
}

// Duplicates must be refused as duplicates or as stale, and nothing else may be refused.
void check_rejects_are_duplicates(const Sim& sim) {
  for (const auto& r : sim.rejects) {
    CAPTURE(r.why);
    CHECK(
        (r.why.find("duplicate") != std::string::npos || r.why.find("stale") != std::string::npos));
  }
}

std::vector<int> subtree(const Tree& tree, int node) {
  std::vector<int> out{node};
  for (size_t i = 0; i < out.size(); ++i)
    for (int kid : tree.children(out[i])) out.push_back(kid);
  return out;
}

}  // namespace

TEST_CASE("sim: every node completes every fence with the same store, reordered and duplicated") {
  size_t stale = 0;
  for (int n : {1, 2, 3, 5, 8, 17, 64}) {
    for (int fanout : {1, 2, 3, 8, n}) {  // n is a star
      for (uint64_t seed : {1u, 2u}) {
        SimOptions o;
        o.nnodes = n;
        o.root = static_cast<int>(seed * 7 % n);
        o.fanout = fanout;
        o.epochs = 4;
        o.seed = seed;
        o.reorder = true;
        o.duplicate = 0.25;
        o.chunk_bytes = 64;  // several chunks per contribution on the way up and down
        CAPTURE(n);
        CAPTURE(fanout);
        CAPTURE(seed);
        Sim sim(o);
        sim.run();
        check_all_completed(sim, o);
        check_rejects_are_duplicates(sim);
        if (n > 1) CHECK(sim.down_chunk_count.at(1) > 1);
        if (n > 1) CHECK_FALSE(sim.rejects.empty());  // the duplicates really happened
        for (const auto& r : sim.rejects) stale += r.why.find("stale") != std::string::npos;
      }
    }
  }
  CHECK(stale > 0);  // some duplicates arrived after their epoch completed
}

TEST_CASE("sim: in-order delivery without faults produces no rejects") {
  SimOptions o;
  o.nnodes = 17;
  o.root = 5;
  o.fanout = 3;
  Sim sim(o);
  sim.run();
  check_all_completed(sim, o);
  CHECK(sim.rejects.empty());
}

TEST_CASE("sim: a delayed subtree holds the fence back, then everyone completes") {
  SimOptions o;
  o.nnodes = 8;
  o.fanout = 2;
  o.reorder = true;
  o.chunk_bytes = 64;
  // Node 3's contributions and its local readiness wait until everything else has settled.
  o.delay = [](const Message& m) { return m.from == 3 && m.kind != Message::down; };
  Sim sim(o);
  sim.run();
  check_all_completed(sim, o);
  CHECK(sim.rejects.empty());
}

TEST_CASE("sim: a dropped upward chunk stops the fence for everyone, without a crash") {
  SimOptions o;
  o.nnodes = 8;
  o.fanout = 2;  // 0 -> {1,2}, 1 -> {3,4}, 2 -> {5,6}, 3 -> {7}
  o.reorder = true;
  o.chunk_bytes = 64;
  o.drop = [](const Message& m) {
    return m.kind == Message::up && m.from == 7 && m.epoch == 2 && m.chunk.index == 1;
  };
  Sim sim(o);
  sim.run();
  REQUIRE(sim.dropped.size() == 1);
  for (int node = 0; node < o.nnodes; ++node) {
    CHECK(sim.reducers[node].completed_epoch() == 1);
    CHECK(sim.completed[node].count(2) == 0);
  }
  CHECK(sim.reducers[3].children_pending(2) == std::vector<int>{7});
  CHECK(sim.reducers[0].children_pending(2) == std::vector<int>{1});
  CHECK(sim.reducers[0].local_entered(2));
  CHECK(sim.rejects.empty());
}

TEST_CASE("sim: a dropped downward chunk stalls only the subtree below it") {
  SimOptions o;
  o.nnodes = 17;
  o.root = 4;
  o.fanout = 3;
  o.reorder = true;
  o.chunk_bytes = 64;
  Tree tree(o.nnodes, o.root, o.fanout);
  const int victim = tree.children(o.root).at(1);
  o.drop = [victim](const Message& m) {
    return m.kind == Message::down && m.to == victim && m.epoch == 1 && m.chunk.index == 0;
  };
  Sim sim(o);
  sim.run();
  REQUIRE(sim.dropped.size() == 1);
  const auto stuck = subtree(tree, victim);
  for (int node = 0; node < o.nnodes; ++node) {
    CAPTURE(node);
    const bool below = std::find(stuck.begin(), stuck.end(), node) != stuck.end();
    // Outside the subtree epoch 1 completes; epoch 2 then waits for the stuck subtree.
    CHECK(sim.reducers[node].completed_epoch() == (below ? 0u : 1u));
  }
  CHECK(sim.rejects.empty());
}

TEST_CASE("sim: 1024 entries of 1 KiB are chunked and pipelined down the tree") {
  SimOptions o;
  o.nnodes = 8;
  o.fanout = 2;
  o.epochs = 3;
  o.puts_per_node = 128;  // 8 x 128 = 1024 values of 1 KiB
  o.value_bytes = 1024;
  Sim sim(o);
  sim.run();
  check_all_completed(sim, o);
  CHECK(sim.rejects.empty());
  const uint32_t chunks = sim.down_chunk_count.at(1);
  CHECK(chunks >= 64);                      // ~1 MiB in 16 KiB chunks
  CHECK(sim.max_up_chunk_count.at(1) > 1);  // upward contributions are chunked too
  // Node 1 has children 3 and 4: it forwards chunk 0 to both while the rest is still coming.
  const auto& log = sim.down_log[1];
  REQUIRE(log.size() == o.epochs * chunks);
  CHECK(log[0].index == 0);
  CHECK(log[0].forwarded == 2);
  CHECK_FALSE(log[0].completed);
  CHECK(log[chunks - 1].completed);
  for (uint32_t i = 0; i + 1 < chunks; ++i) CHECK_FALSE(log[i].completed);
}

TEST_CASE("sim: 1024 ranks x 1 KiB through a 64-node tree, reordered and duplicated") {
  for (int fanout : {2, 8}) {
    SimOptions o;
    o.nnodes = 64;
    o.fanout = fanout;
    o.epochs = 3;
    o.reorder = true;
    o.duplicate = 0.1;
    o.puts_per_node = 16;
    o.value_bytes = 1024;
    CAPTURE(fanout);
    Sim sim(o);
    sim.run();
    check_all_completed(sim, o);
    check_rejects_are_duplicates(sim);
  }
}
