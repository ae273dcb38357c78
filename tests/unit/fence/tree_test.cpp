// Tree topology: every shape from a chain to a star, uneven node counts, roots other than 0.
#include "fence/tree.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>

using lattice::fence::Tree;

namespace {

// Levels below the root of a complete-as-possible k-ary tree with n nodes: the smallest d
// with 1 + k + ... + k^d >= n (k = 1 is a chain of n-1 levels).
int expected_depth(int n, int k) {
  if (k == 1) return n - 1;
  int depth = 0;
  long long level = 1, total = 1;
  while (total < n) {
    level *= k;
    total += level;
    ++depth;
  }
  return depth;
}

void check_tree(int n, int root, int fanout) {
  CAPTURE(n);
  CAPTURE(root);
  CAPTURE(fanout);
  Tree tree(n, root, fanout);
  REQUIRE(tree.size() == n);
  REQUIRE(tree.root() == root);
  CHECK(tree.parent(root) == -1);

  std::vector<int> parent_count(n, 0);
  for (int node = 0; node < n; ++node) {
    auto kids = tree.children(node);
    CHECK(static_cast<int>(kids.size()) <= std::min(fanout, std::max(1, n - 1)));
    for (int kid : kids) {
      REQUIRE(tree.contains(kid));
      CHECK(kid != root);
      CHECK(tree.parent(kid) == node);
      ++parent_count[kid];
    }
    if (node != root) {
      int p = tree.parent(node);
      REQUIRE(tree.contains(p));
      auto siblings = tree.children(p);
      CHECK(std::count(siblings.begin(), siblings.end(), node) == 1);
    }
  }
  for (int node = 0; node < n; ++node) CHECK(parent_count[node] == (node == root ? 0 : 1));

  // Breadth-first walk from the root reaches everyone once; its deepest level is depth().
  std::vector<int> level(n, -1);
  std::deque<int> queue{root};
  level[root] = 0;
  int reached = 0, deepest = 0;
  while (!queue.empty()) {
    int node = queue.front();
    queue.pop_front();
    ++reached;
    deepest = std::max(deepest, level[node]);
    for (int kid : tree.children(node)) {
      REQUIRE(level[kid] == -1);
      level[kid] = level[node] + 1;
      queue.push_back(kid);
    }
  }
  CHECK(reached == n);
  CHECK(tree.depth() == deepest);
  CHECK(tree.depth() == expected_depth(n, std::min(fanout, std::max(1, n - 1))));
}

}  // namespace

TEST_CASE("tree: every fanout and size, roots 0, middle and last") {
  for (int n = 1; n <= 40; ++n)
    for (int fanout = 1; fanout <= n + 1; ++fanout)
      for (int root : {0, n / 2, n - 1}) check_tree(n, root, fanout);
}

TEST_CASE("tree: known shapes") {
  SUBCASE("binary tree of 6 rooted at 0") {
    Tree tree(6, 0, 2);
    CHECK(tree.children(0) == std::vector<int>{1, 2});
    CHECK(tree.children(1) == std::vector<int>{3, 4});
    CHECK(tree.children(2) == std::vector<int>{5});
    CHECK(tree.children(5).empty());
    CHECK(tree.parent(4) == 1);
    CHECK(tree.depth() == 2);
  }
  SUBCASE("relabelled around root 4 of 6") {
    Tree tree(6, 4, 2);  // positions 0..5 are nodes 4,5,0,1,2,3
    CHECK(tree.parent(4) == -1);
    CHECK(tree.children(4) == std::vector<int>{5, 0});
    CHECK(tree.children(5) == std::vector<int>{1, 2});
    CHECK(tree.children(0) == std::vector<int>{3});
    CHECK(tree.parent(3) == 0);
  }
  SUBCASE("fanout at or past n-1 is a star") {
    for (int fanout : {4, 5, 1 << 30}) {
      Tree tree(5, 2, fanout);
      CHECK(tree.fanout() == 4);
      CHECK(tree.children(2) == std::vector<int>{3, 4, 0, 1});
      CHECK(tree.depth() == 1);
      for (int node : {0, 1, 3, 4}) CHECK(tree.parent(node) == 2);
    }
  }
  SUBCASE("fanout 1 is a chain") {
    Tree tree(4, 1, 1);
    CHECK(tree.children(1) == std::vector<int>{2});
    CHECK(tree.children(3) == std::vector<int>{0});
    CHECK(tree.children(0).empty());
    CHECK(tree.depth() == 3);
  }
  SUBCASE("single node") {
    Tree tree(1, 0, 8);
    CHECK(tree.parent(0) == -1);
    CHECK(tree.children(0).empty());
    CHECK(tree.depth() == 0);
  }
  SUBCASE("large node count with a huge fanout does not overflow") {
    Tree tree(100000, 99999, 1 << 30);
    CHECK(tree.children(0).empty());
    CHECK(tree.children(99999).size() == 99999);
    CHECK(tree.depth() == 1);
  }
}

TEST_CASE("in_subtree: a node and everything below it, whatever the root") {
  Tree tree(7, 0, 2);  // 0 -> 1, 2; 1 -> 3, 4; 2 -> 5, 6
  CHECK(tree.in_subtree(1, 1));
  CHECK(tree.in_subtree(1, 3));
  CHECK(tree.in_subtree(1, 4));
  CHECK_FALSE(tree.in_subtree(1, 5));
  CHECK_FALSE(tree.in_subtree(1, 0));
  CHECK_FALSE(tree.in_subtree(3, 1));
  for (int n = 0; n < 7; ++n) CHECK(tree.in_subtree(0, n));
  CHECK_FALSE(tree.in_subtree(0, 7));
  Tree shifted(5, 3, 2);  // positions from node 3: 3 -> 4, 0; 4 -> 1, 2
  CHECK(shifted.in_subtree(4, 1));
  CHECK(shifted.in_subtree(4, 2));
  CHECK_FALSE(shifted.in_subtree(0, 1));
  CHECK_FALSE(shifted.in_subtree(4, 3));
}

TEST_CASE("for_each_in_subtree visits exactly the nodes in_subtree holds, each once") {
  for (int n : {1, 2, 7, 10, 64, 100, 257})
    for (int fanout : {1, 2, 3, 8, 300})
      for (int root : {0, n / 3, n - 1}) {
        Tree tree(n, root, fanout);
        for (int top = 0; top < n; ++top) {
          std::vector<int> seen(static_cast<size_t>(n), 0);
          tree.for_each_in_subtree(top, [&](int node) { ++seen[static_cast<size_t>(node)]; });
          for (int node = 0; node < n; ++node)
            REQUIRE(seen[static_cast<size_t>(node)] == (tree.in_subtree(top, node) ? 1 : 0));
        }
      }
}
