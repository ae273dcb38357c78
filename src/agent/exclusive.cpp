#include "agent/exclusive.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

NodeLaunch node_launch(const LaunchSpec& spec) {
  const bool batch_step =
      !spec.allocation_id.empty() && spec.pmi == wire::PmiMode::none && !spec.hatch_command;
  return NodeLaunch{spec.launch_id, spec.user.uid, spec.user.name, spec.exclusive,
                    !batch_step && !spec.local_ranks().empty()};
}

Status may_share_node(const LaunchSpec& incoming, const std::vector<NodeLaunch>& running,
                      const std::string& node_id) {
  const NodeLaunch self = node_launch(incoming);
  if (!self.counts) return {};
  // Whose it is, said only to its own user.
  auto whose = [&](const NodeLaunch& other) {
    return other.uid == self.uid ? cat("user ", other.user) : std::string("another user's");
  };
  for (const auto& other : running) {
    if (!other.counts || other.id == self.id) continue;
    if (other.exclusive)
      return make_error(cat("node ", node_id, " is held by launch ", other.id, " (", whose(other),
                            ", --exclusive): no other launch starts there until it ends"));
    if (self.exclusive)
      return make_error(cat("--exclusive: node ", node_id, " already runs launch ", other.id, " (",
                            whose(other), ")"));
  }
  return {};
}

}  // namespace lattice::agent
