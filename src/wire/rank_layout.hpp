// Where a launch's ranks run, in the compact form every node's launch request carries: a rule
// (cyclic: rank r on node r % nodes) or blocks of consecutive nodes that each hold the same
// number of consecutive ranks (block layouts, even or not, are two blocks at most). Its size
// does not grow with the ranks or nodes for the layouts lattice launch makes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.hpp"

namespace lattice::wire {

struct NodeBlock {
  uint32_t nodes = 0;       // this many consecutive nodes,
  uint32_t ranks_each = 0;  // each holding this many consecutive ranks
};

struct RankLayout {
  bool cyclic = false;            // rank r on node r % nodes (blocks unused)
  std::vector<NodeBlock> blocks;  // else from node 0 and rank 0 on, in order
};

// The compact form of `rank_nodes` (node index of every rank), or nullopt when it has none (the
// list is then sent as it is).
std::optional<RankLayout> compact_rank_layout(const std::vector<int>& rank_nodes, int nnodes);

// Back to the node of every rank, checked against the request's world size and node count
// (hostile input: the sizes are checked before anything is allocated).
Result<std::vector<int>> expand_rank_layout(const RankLayout& layout, int world_size, int nnodes);

}  // namespace lattice::wire
