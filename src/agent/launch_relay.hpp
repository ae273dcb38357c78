// A relayed launch (lattice launch --launch tree) as one agent routes it. The launcher sends
// only the head its request; every agent sends its children in the fence tree theirs, passes up
// what its subtree reports (answers to the requests, output, exits, ends, stdin taken, losses),
// and passes down what comes from above (signals, stdin, aborts). So the launcher makes one
// link where a star makes one per node, and no agent makes more than its fanout.
//
// This class decides, from the tree alone: where reports go up (back on the link the request
// came on; to the head once the parent is lost, as the head is linked to the launcher), which
// nodes a report may come from, which children take stdin, and when everything below has been
// heard from for good (then the agent may forget the launch). Pure: the agent sends.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "fence/tree.hpp"

namespace lattice::agent {

class LaunchRelay {
 public:
  static constexpr int kOrigin = -1;   // uplink(): the link the request came on
  static constexpr int kNowhere = -2;  // uplink(): the parent and the head are both lost

  explicit LaunchRelay(const LaunchSpec& spec);

  const std::vector<int>& children() const { return children_; }
  // Where this agent's reports (and its subtree's) go: back on the link the request came on
  // (from the launcher, or from the parent), or once that is lost to the head node; kNowhere.
  int uplink() const { return up_; }
  // Reports go to the parent, on the link the request came on (not the head, nor an adopting
  // launcher).
  bool reports_via_parent() const { return self_ != head_ && !parent_lost_; }
  // A report about node `about` from node `from` (as its link proved) may pass up when `from` is
  // a child whose subtree holds `about`. At the head, whose way down to `from` may be broken,
  // also: `from` reports for itself; `from`'s parent is known lost here and `about` is in
  // `from`'s subtree (it stands in for that parent); or, a `loss`, `from` reports its parent lost.
  Status may_pass(int from, int about, bool loss = false) const;
  // The children whose subtrees hold an input rank (stdin goes only there).
  const std::vector<int>& input_children() const { return input_children_; }
  int parent() const { return tree_.parent(self_); }  // -1 at the head

  // What passed up about node `node`: its acceptance, its refusal (it started nothing and asked
  // nobody), its end.
  void accepted(int node);
  void refused(int node);
  void ended(int node);
  // Node `node` was lost to its parent: this node (its link to a child) or a relay below (whose
  // report of it passed). Returns true for a node below not settled yet, which is reported up.
  // Its subtree is settled too unless it had accepted and this is the head: then its nodes,
  // having lost their way up, report to the head directly. The parent lost: reports go to the
  // head from now on (nowhere, when the parent is the head), starting with that loss (true,
  // once): its own parent may be lost too, and then nobody else would report it.
  bool lost(int node);
  // The launcher reached this node directly (its head was lost): reports go on that link.
  void adopted() { up_ = kOrigin; }
  // Every node below is ended, refused, or lost to this node.
  bool settled() const { return open_ == 0; }

 private:
  // kLost: at the head, an accepted node lost, whose subtree reports here directly.
  enum : uint8_t { kOutside, kOpen, kAccepted, kSettled, kLost };
  void settle(int node);
  void settle_subtree(int top);

  fence::Tree tree_;
  int self_, head_;
  int up_;
  bool parent_lost_ = false;
  std::vector<int> children_;
  std::vector<int> input_children_;
  std::vector<uint8_t> state_;  // per node of the launch
  size_t open_ = 0;             // nodes below not yet settled
};

}  // namespace lattice::agent
