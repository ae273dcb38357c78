#include "agent/launch_family.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

Status LaunchFamily::add(const std::string& child_id, const std::vector<uint32_t>& rank_nodes) {
  if (rank_nodes.empty()) return make_error(cat("spawned launch ", child_id, " has no rank"));
  if (children_.size() >= kMaxSpawnedLaunches)
    return make_error(
        cat("launch ", spec_.launch_id, " has spawned ", kMaxSpawnedLaunches, " launches already"));
  std::vector<int> layout;
  layout.reserve(rank_nodes.size());
  for (uint32_t node : rank_nodes) {
    if (node >= spec_.peers.size())
      return make_error(cat("spawned launch ", child_id, " names node ", node, " of launch ",
                            spec_.launch_id, ", which has ", spec_.peers.size()));
    layout.push_back(static_cast<int>(node));
  }
  if (!children_.emplace(namespace_of(child_id), std::move(layout)).second)
    return make_error(cat("spawned launch ", child_id, " is known already"));
  return {};
}

const std::vector<int>* LaunchFamily::layout_of(const std::string& nspace) const {
  auto it = children_.find(nspace);
  return it == children_.end() ? nullptr : &it->second;
}

ProcNodes LaunchFamily::proc_nodes() const {
  return [this, own = launch_proc_nodes(spec_)](const std::string& nspace,
                                                int rank) -> Result<std::set<int>> {
    const std::vector<int>* layout = layout_of(nspace);
    if (!layout) return own(nspace, rank);
    if (rank == wire::kEveryRank) return std::set<int>(layout->begin(), layout->end());
    if (rank < 0 || static_cast<size_t>(rank) >= layout->size())
      return make_error(cat("rank ", rank, " is not one of namespace '", nspace, "'"));
    return std::set<int>{(*layout)[static_cast<size_t>(rank)]};
  };
}

}  // namespace lattice::agent
