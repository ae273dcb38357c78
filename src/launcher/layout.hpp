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
// `node_cpus`: the CPUs each node's launches may use where the launcher knows it (local mode:
// its own), else 0. Known, -c lays ranks out by CPUs: nodes not given are as many as the ranks'
// CPUs fill, and a node given more ranks' CPUs than it has is an error. Unknown, each agent
// refuses what does not fit it.
Result<Layout> make_layout(const LaunchOptions& options, int available_agents, int node_cpus = 0);

}  // namespace lattice::launcher
