// PMI_process_mapping encoder (see mapping.hpp): runs of equal nodes become blocks of
// consecutive nodes with equal rank counts; then the shortest block prefix that reproduces
// every rank when wrapped is kept (the full list always does).
#include "pmi/mapping.hpp"

#include <cstddef>
#include <unordered_map>

#include "base/strings.hpp"

namespace lattice::pmi {

namespace {

struct Block {
  int first_node;
  int node_count;
  size_t ranks_per_node;
};

std::vector<int> renumber(const std::vector<int>& node_of_rank) {
  std::unordered_map<int, int> ids;
  std::vector<int> out;
  out.reserve(node_of_rank.size());
  for (int node : node_of_rank) {
    auto [it, added] = ids.emplace(node, static_cast<int>(ids.size()));
    out.push_back(it->second);
  }
  return out;
}

std::vector<Block> blocks_of(const std::vector<int>& nodes) {
  std::vector<Block> blocks;
  size_t r = 0;
  while (r < nodes.size()) {
    size_t end = r;
    while (end < nodes.size() && nodes[end] == nodes[r]) ++end;
    size_t run = end - r;
    Block* last = blocks.empty() ? nullptr : &blocks.back();
    if (last && last->ranks_per_node == run && last->first_node + last->node_count == nodes[r])
      ++last->node_count;
    else
      blocks.push_back(Block{nodes[r], 1, run});
    r = end;
  }
  return blocks;
}

size_t ranks_in(const Block& b) { return static_cast<size_t>(b.node_count) * b.ranks_per_node; }

// Whether blocks[0..k), repeated, gives nodes[r] for every r. The ranks of the first pass are
// the prefix's own, so the check starts after them.
bool prefix_reproduces(const std::vector<Block>& blocks, size_t k, const std::vector<int>& nodes) {
  size_t covered = 0;
  for (size_t i = 0; i < k; ++i) covered += ranks_in(blocks[i]);
  size_t r = covered;
  while (r < nodes.size()) {
    for (size_t i = 0; i < k && r < nodes.size(); ++i) {
      const Block& b = blocks[i];
      for (int n = 0; n < b.node_count && r < nodes.size(); ++n)
        for (size_t c = 0; c < b.ranks_per_node && r < nodes.size(); ++c, ++r)
          if (nodes[r] != b.first_node + n) return false;
    }
  }
  return true;
}

}  // namespace

std::string process_mapping(const std::vector<int>& node_of_rank) {
  if (node_of_rank.empty()) return "";
  std::vector<int> nodes = renumber(node_of_rank);
  std::vector<Block> blocks = blocks_of(nodes);
  size_t keep = blocks.size();
  for (size_t k = 1; k < blocks.size(); ++k) {
    if (prefix_reproduces(blocks, k, nodes)) {
      keep = k;
      break;
    }
  }
  std::string out = "(vector";
  for (size_t i = 0; i < keep; ++i)
    out += cat(",(", blocks[i].first_node, ',', blocks[i].node_count, ',', blocks[i].ranks_per_node,
               ')');
  return out + ")";
}

}  // namespace lattice::pmi
