#include "launcher/fence_clocks.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>

using lattice::fence::Tree;
using lattice::launcher::align_by_fences;
using Fence = lattice::wire::FenceTimes;

namespace {

// Fences over a tree as they happen on one true clock (µs), reported by each node on its own
// clock, which starts at origins_us[node] on the true one: every rank enters at a random time,
// contributions go up and the store comes down with random one-way delays of at least
// `min_delay` µs.
std::vector<std::vector<Fence>> simulate(const Tree& tree, const std::vector<double>& origins_us,
                                         int rounds, double min_delay, std::mt19937& rng) {
  std::uniform_real_distribution<double> jitter(0, 300);
  const auto n = static_cast<size_t>(tree.size());
  std::vector<std::vector<Fence>> out(n);
  double start = 100000;
  for (int e = 1; e <= rounds; ++e, start += 50000) {
    std::vector<double> entered(n), reduced(n), store(n);
    std::vector<int> order;  // breadth first: parents before children
    tree.for_each_in_subtree(tree.root(), [&](int node) { order.push_back(node); });
    for (int node : order) entered[static_cast<size_t>(node)] = start + jitter(rng);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // leaves first: up
      double ready = entered[static_cast<size_t>(*it)];
      for (int child : tree.children(*it))
        ready = std::max(ready, reduced[static_cast<size_t>(child)] + min_delay + jitter(rng));
      reduced[static_cast<size_t>(*it)] = ready + 5;
    }
    for (int node : order) {  // down
      const int parent = tree.parent(node);
      store[static_cast<size_t>(node)] =
          parent < 0 ? reduced[static_cast<size_t>(node)]
                     : store[static_cast<size_t>(parent)] + min_delay + jitter(rng);
    }
    for (size_t i = 0; i < n; ++i) {
      auto local = [&](double t) { return static_cast<uint64_t>(std::llround(t - origins_us[i])); };
      out[i].push_back(Fence{static_cast<uint64_t>(e), local(entered[i]), local(reduced[i]),
                             local(store[i]), local(store[i] + 3)});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("fences place every node's clock within the links' one-way delays of the truth") {
  std::mt19937 rng(7);
  const Tree tree(40, 3, 3);  // three levels below the head (node 3)
  std::vector<double> truth_us(40), estimate_ms(40);
  std::uniform_real_distribution<double> origin(0, 80000), error(-40, 40);
  for (size_t i = 0; i < truth_us.size(); ++i) {
    truth_us[i] = origin(rng);
    // The request's round trip: the head's estimate is exact here, the others' up to 40 ms off.
    estimate_ms[i] = truth_us[i] / 1e3 + (i == 3 ? 0 : error(rng));
  }
  auto fences = simulate(tree, truth_us, 40, 20, rng);
  std::vector<std::optional<double>> origins(estimate_ms.begin(), estimate_ms.end());
  auto aligned = align_by_fences(tree, origins, fences);
  for (size_t i = 0; i < aligned.size(); ++i) {
    REQUIRE(aligned[i]);
    // Each level adds at most half the spread of its bounds (delays of 20-320 µs, the least of
    // 40 taken): well under a millisecond for three levels, against tens of ms before.
    CHECK(std::abs(*aligned[i] - truth_us[i] / 1e3) < 0.6);
  }
}

TEST_CASE("a node whose fences do not bound it both ways keeps its estimate") {
  std::mt19937 rng(11);
  const Tree tree(7, 0, 2);
  std::vector<double> truth_us{0, 1000, 2000, 3000, 4000, 5000, 6000};
  auto fences = simulate(tree, truth_us, 5, 20, rng);
  std::vector<std::optional<double>> estimate{0.0, 9.0, 2.0, 3.0, 4.0, 5.0, 6.0};

  SUBCASE("no store from its parent: only the upper bound") {
    for (auto& f : fences[1]) f.store_us = 0;
    auto aligned = align_by_fences(tree, estimate, fences);
    CHECK(*aligned[1] == 9.0);
    CHECK(std::abs(*aligned[2] - 2.0) < 0.5);  // its sibling is aligned
  }
  SUBCASE("bounds that contradict each other (a clock that jumped)") {
    for (auto& f : fences[1]) {  // sent up after its parent merged, had the store before it
      f.reduced_us += 100000;
      f.store_us -= 50000;
    }
    auto aligned = align_by_fences(tree, estimate, fences);
    CHECK(*aligned[1] == 9.0);
  }
  SUBCASE("no request sent to it: stays unplaced, and its children keep their estimates") {
    estimate[1] = std::nullopt;
    auto aligned = align_by_fences(tree, estimate, fences);
    CHECK(!aligned[1]);
    CHECK(*aligned[3] == 3.0);
    CHECK(*aligned[4] == 4.0);
  }
  SUBCASE("a hostile agent's extreme times place only its own subtree, and finitely") {
    for (auto& f : fences[1]) f.reduced_us = f.store_us = UINT64_MAX;
    auto aligned = align_by_fences(tree, estimate, fences);
    for (const auto& origin : aligned) CHECK(std::isfinite(*origin));
    CHECK(std::abs(*aligned[2] - 2.0) < 0.5);  // its sibling's subtree is untouched
    CHECK(std::abs(*aligned[5] - 5.0) < 0.5);
  }
  SUBCASE("fences of other epochs than its parent's") {
    for (auto& f : fences[2]) f.epoch += 100;
    auto aligned = align_by_fences(tree, estimate, fences);
    CHECK(*aligned[2] == 2.0);
  }
}

TEST_CASE("origins that do not match the tree are returned as they are") {
  const Tree tree(4, 0, 2);
  std::vector<std::optional<double>> origins{1.0, 2.0, 3.0};
  auto aligned = align_by_fences(tree, origins, std::vector<std::vector<Fence>>(3));
  CHECK(aligned == origins);
}
