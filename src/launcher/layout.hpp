// Rank layout: how many nodes, and which node every rank runs on. Pure, so the block, cyclic
// and uneven cases (and PMI_process_mapping, derived by the agents from rank_nodes) are tested
// without agents.
#pragma once

#include <vector>

#include "base/result.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

struct Layout {
  int ntasks = 0;
  int nodes = 0;
  std::vector<int> rank_nodes;  // node index of every rank
  // The head of its fence tree, which decides aborts (and relays): rank 0's node, unless given
  // (the user door's node, which relays a command to another node and runs nothing itself).
  int head_node = -1;
  int head() const { return head_node >= 0 ? head_node : rank_nodes.front(); }
};

// `available_agents` is the length of --agents, or 0 in local mode (agents are started to fit).
Result<Layout> make_layout(const LaunchOptions& options, int available_agents);

}  // namespace lattice::launcher
