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
};

// `available_agents` is the length of --agents, or 0 in local mode (agents are started to fit).
Result<Layout> make_layout(const LaunchOptions& options, int available_agents);

}  // namespace lattice::launcher
