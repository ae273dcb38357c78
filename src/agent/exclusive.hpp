// --exclusive: a launch that asks for it starts only on a node where no other launch runs, and
// while it runs no other launch starts there. What counts is a launch with ranks on the node:
// not a head that only relays (it starts nothing there), nor an allocation's batch step (the
// shell its launches are started from, which Slurm does not count against a step's
// --exclusive either). Pure: the agent gives it the launches it runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"

namespace lattice::agent {

// A launch on this node, as far as sharing it goes.
struct NodeLaunch {
  std::string id;
  uint32_t uid = 0;
  std::string user;        // its user's name
  bool exclusive = false;  // it asked for --exclusive
  bool counts = true;      // it has ranks here and is not a batch step
};

NodeLaunch node_launch(const LaunchSpec& spec);

// Whether `incoming` may start on node `node_id` beside the `running` launches (those that have
// not ended); the error names the launch in the way, and its user only to that user.
Status may_share_node(const LaunchSpec& incoming, const std::vector<NodeLaunch>& running,
                      const std::string& node_id);

}  // namespace lattice::agent
