// k-ary tree arithmetic for the fence. Child positions are computed in 64 bits: k*p+k can pass
// INT_MAX for large node counts even though the fanout is clamped to n-1.
#include "fence/tree.hpp"

#include <algorithm>
#include <cassert>

namespace lattice::fence {

Tree::Tree(int nnodes, int root, int fanout)
    : nnodes_(nnodes), root_(root), fanout_(std::min(fanout, std::max(1, nnodes - 1))) {
  assert(nnodes >= 1);
  assert(root >= 0 && root < nnodes);
  assert(fanout >= 1);
}

int Tree::position(int node) const {
  assert(contains(node));
  return (node - root_ + nnodes_) % nnodes_;
}

int Tree::node_at(long long pos) const { return static_cast<int>((pos + root_) % nnodes_); }

int Tree::parent(int node) const {
  int pos = position(node);
  if (pos == 0) return -1;
  return node_at((pos - 1) / fanout_);
}

std::vector<int> Tree::children(int node) const {
  const long long first = static_cast<long long>(fanout_) * position(node) + 1;
  const long long end = std::min<long long>(first + fanout_, nnodes_);
  std::vector<int> out;
  for (long long pos = first; pos < end; ++pos) out.push_back(node_at(pos));
  return out;
}

bool Tree::in_subtree(int top, int node) const {
  if (!contains(top) || !contains(node)) return false;
  const int top_pos = position(top);
  // Ancestors sit at smaller positions: walk up until reaching `top` or passing it.
  for (int pos = position(node);; pos = (pos - 1) / fanout_) {
    if (pos == top_pos) return true;
    if (pos < top_pos || pos == 0) return false;
  }
}

int Tree::depth() const {
  // The last position is on the deepest level (positions are breadth-first).
  int levels = 0;
  for (int pos = nnodes_ - 1; pos > 0; pos = (pos - 1) / fanout_) ++levels;
  return levels;
}

}  // namespace lattice::fence
