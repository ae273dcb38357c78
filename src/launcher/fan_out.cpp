#include "launcher/fan_out.hpp"

#include <algorithm>
#include <utility>

namespace lattice::launcher {

FanOut::FanOut(int nodes, int head, int fanout, bool all_named, std::string_view launch)
    : nodes_(nodes),
      head_(head),
      all_named_(all_named),
      relayed_(all_named && nodes > 1 &&
               (launch == "tree" || (launch == "auto" && nodes >= kLaunchTreeNodes))) {
  // A relayed launch passes itself on along the tree the fences use.
  if (nodes > 1) tree_.emplace(nodes, head, fanout);
}

bool FanOut::speaks_for(int via, int node) const {
  return relayed_ ? tree_->in_subtree(via, node) : node == via;
}

std::optional<int> FanOut::origin(int via, uint32_t claimed) const {
  if (claimed >= static_cast<uint32_t>(nodes_)) return std::nullopt;
  const int node = static_cast<int>(claimed);
  if (!speaks_for(via, node)) return std::nullopt;
  return node;
}

std::vector<int> FanOut::below(int top) const {
  std::vector<int> out;
  if (!relayed_) return out;
  for (int node = 0; node < nodes_; ++node)
    if (node != top && tree_->in_subtree(top, node)) out.push_back(node);
  return out;
}

void FanOut::go_direct(policy::Failure abort) {
  direct_ = true;
  direct_abort_ = std::move(abort);
}

FanOut::Abort FanOut::abort() {
  if (!relaying()) return Abort::own_link;
  return std::exchange(abort_sent_, true) ? Abort::passed_on : Abort::to_head;
}

bool FanOut::signal_goes_out(int signum) {
  if (!relaying()) return true;
  if (std::find(signals_sent_.begin(), signals_sent_.end(), signum) != signals_sent_.end())
    return false;
  signals_sent_.push_back(signum);
  return true;
}

}  // namespace lattice::launcher
