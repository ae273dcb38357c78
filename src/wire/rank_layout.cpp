#include "wire/rank_layout.hpp"

#include "base/strings.hpp"

namespace lattice::wire {

std::optional<RankLayout> compact_rank_layout(const std::vector<int>& rank_nodes, int nnodes) {
  if (rank_nodes.empty() || nnodes <= 0) return std::nullopt;
  bool cyclic = true;
  for (size_t r = 0; r < rank_nodes.size() && cyclic; ++r)
    cyclic = rank_nodes[r] == static_cast<int>(r % static_cast<size_t>(nnodes));
  if (cyclic && static_cast<int>(rank_nodes.size()) >= nnodes) return RankLayout{true, {}};

  // Runs of ranks per node, nodes in order from 0; then runs of nodes with equal counts.
  RankLayout layout;
  int node = 0;
  size_t r = 0;
  while (r < rank_nodes.size()) {
    if (rank_nodes[r] != node) return std::nullopt;  // not consecutive nodes from 0
    size_t start = r;
    while (r < rank_nodes.size() && rank_nodes[r] == node) ++r;
    auto count = static_cast<uint32_t>(r - start);
    if (!layout.blocks.empty() && layout.blocks.back().ranks_each == count)
      ++layout.blocks.back().nodes;
    else
      layout.blocks.push_back(NodeBlock{1, count});
    ++node;
  }
  if (node != nnodes) return std::nullopt;
  return layout;
}

Result<std::vector<int>> expand_rank_layout(const RankLayout& layout, int world_size, int nnodes) {
  if (world_size <= 0 || nnodes <= 0) return make_error("rankLayout: no ranks or no nodes");
  std::vector<int> out;
  if (layout.cyclic) {
    if (world_size < nnodes)
      return make_error(cat("rankLayout: cyclic over ", nnodes, " nodes leaves nodes without ",
                            "ranks (worldSize ", world_size, ")"));
    out.resize(static_cast<size_t>(world_size));
    for (int r = 0; r < world_size; ++r) out[static_cast<size_t>(r)] = r % nnodes;
    return out;
  }
  uint64_t nodes = 0, ranks = 0;
  for (const auto& block : layout.blocks) {
    if (block.nodes == 0 || block.ranks_each == 0)
      return make_error("rankLayout: a block of no nodes or no ranks");
    nodes += block.nodes;
    ranks += uint64_t{block.nodes} * block.ranks_each;
    if (nodes > uint64_t(nnodes) || ranks > uint64_t(world_size)) break;
  }
  if (nodes != uint64_t(nnodes) || ranks != uint64_t(world_size))
    return make_error(cat("rankLayout: blocks cover ", nodes, " nodes and ", ranks, " ranks, not ",
                          nnodes, " and ", world_size));
  out.reserve(static_cast<size_t>(world_size));
  int node = 0;
  for (const auto& block : layout.blocks)
    for (uint32_t n = 0; n < block.nodes; ++n, ++node)
      out.insert(out.end(), block.ranks_each, node);
  return out;
}

}  // namespace lattice::wire
