#include "agent/launch_relay.hpp"

#include <utility>

#include "base/strings.hpp"

namespace lattice::agent {

LaunchRelay::LaunchRelay(const LaunchSpec& spec)
    : tree_(spec.fence_tree()),
      self_(spec.node_index),
      head_(spec.head_node),
      up_(kOrigin),
      children_(tree_.children(self_)),
      state_(static_cast<size_t>(spec.nnodes()), kOutside) {
  tree_.for_each_in_subtree(self_, [this](int node) {
    if (node == self_) return;
    state_[static_cast<size_t>(node)] = kOpen;
    ++open_;
  });
  if (spec.input_rank == -1) input_children_ = children_;
  if (spec.input_rank >= 0) {
    const int input_node = spec.rank_nodes[static_cast<size_t>(spec.input_rank)];
    for (int child : children_)
      if (tree_.in_subtree(child, input_node)) input_children_.push_back(child);
  }
}

Status LaunchRelay::may_pass(int from, int about, bool loss) const {
  if (!tree_.contains(from) || !tree_.contains(about))
    return make_error(cat("node ", about, " or ", from, " is not one of the launch's nodes"));
  if (tree_.parent(from) == self_ && tree_.in_subtree(from, about)) return {};
  if (self_ == head_) {
    const int parent = tree_.parent(from);
    if (from == about) return {};
    if (parent >= 0 && state_[static_cast<size_t>(parent)] == kLost &&
        tree_.in_subtree(from, about))
      return {};
    if (loss && about == parent) return {};
  }
  return make_error(cat("node ", from, " may not pass on reports about node ", about,
                        " here (it is not a child of this node whose subtree holds it)"));
}

void LaunchRelay::accepted(int node) {
  if (tree_.contains(node) && state_[static_cast<size_t>(node)] == kOpen)
    state_[static_cast<size_t>(node)] = kAccepted;
}

void LaunchRelay::refused(int node) {
  if (tree_.contains(node)) settle_subtree(node);
}

void LaunchRelay::ended(int node) {
  if (tree_.contains(node)) settle(node);
}

bool LaunchRelay::lost(int node) {
  if (!tree_.contains(node)) return false;
  if (node == tree_.parent(self_)) {
    if (std::exchange(parent_lost_, true)) return false;
    up_ = node == head_ ? kNowhere : head_;
    return true;
  }
  const uint8_t was = state_[static_cast<size_t>(node)];
  if (was == kOutside || was == kSettled || was == kLost) return false;
  settle(node);
  if (was == kOpen || self_ != head_)
    settle_subtree(node);
  else
    state_[static_cast<size_t>(node)] = kLost;
  return true;
}

void LaunchRelay::settle(int node) {
  uint8_t& s = state_[static_cast<size_t>(node)];
  if (s != kOpen && s != kAccepted) return;
  --open_;
  s = kSettled;
}

void LaunchRelay::settle_subtree(int top) {
  tree_.for_each_in_subtree(top, [this](int node) { settle(node); });
}

}  // namespace lattice::agent
