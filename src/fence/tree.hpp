// Topology of the fence tree between a launch's agents: a k-ary tree over node indices
// 0..n-1 rooted at the head node. Pure arithmetic; the same inputs give the same tree on every
// node, which is what lets each agent find its parent and children without talking.
#pragma once

#include <algorithm>
#include <vector>

namespace lattice::fence {

// Nodes are relabelled so the root sits at position 0: pos = (node - root + n) % n. Position p
// has parent (p-1)/k and children k*p+1 .. k*p+k, so positions are in breadth-first order and
// every level but the last is full. A fanout >= n-1 is a star (the root talks to everyone).
class Tree {
 public:
  // Preconditions (asserted): nnodes >= 1, 0 <= root < nnodes, fanout >= 1.
  Tree(int nnodes, int root, int fanout);

  int parent(int node) const;                 // -1 for the root
  std::vector<int> children(int node) const;  // in position order: the merge order of the fence
  int depth() const;                          // levels below the root (0 for a single node)
  // Whether `node` is `top` or below it (O(depth)).
  bool in_subtree(int top, int node) const;
  // Calls fn(node) for `top` and every node below it, level by level: a subtree's positions
  // are one contiguous range per level, so this costs the subtree's size, not the tree's.
  template <typename F>
  void for_each_in_subtree(int top, F&& fn) const {
    for (long long lo = position(top), hi = lo; lo < nnodes_;
         lo = lo * fanout_ + 1, hi = std::min<long long>(hi * fanout_ + fanout_, nnodes_ - 1))
      for (long long pos = lo; pos <= hi; ++pos) fn(node_at(pos));
  }
  int root() const { return root_; }
  int size() const { return nnodes_; }
  int fanout() const { return fanout_; }  // effective fanout, at most max(1, n-1)
  bool contains(int node) const { return node >= 0 && node < nnodes_; }

 private:
  int position(int node) const;
  int node_at(long long pos) const;

  int nnodes_;
  int root_;
  int fanout_;
};

}  // namespace lattice::fence
