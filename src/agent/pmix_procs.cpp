#include "agent/pmix_procs.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

std::string namespace_of(const std::string& launch_id) { return "lattice." + launch_id; }

std::string launch_nspace(const LaunchSpec& spec) { return namespace_of(spec.launch_id); }

ProcNodes launch_proc_nodes(const LaunchSpec& spec) {
  return [&spec](const std::string& nspace, int rank) -> Result<std::set<int>> {
    if (nspace != launch_nspace(spec))
      return make_error(cat("namespace '", nspace, "' is not one of launch ", spec.launch_id));
    if (rank == wire::kEveryRank)
      return std::set<int>(spec.rank_nodes.begin(), spec.rank_nodes.end());
    if (rank < 0 || rank >= spec.world_size)
      return make_error(cat("rank ", rank, " is not one of namespace '", nspace, "'"));
    return std::set<int>{spec.rank_nodes[static_cast<size_t>(rank)]};
  };
}

Result<std::set<int>> participant_nodes(const std::vector<wire::CollectiveProc>& procs,
                                        const ProcNodes& nodes_of) {
  std::set<int> out;
  for (const auto& proc : procs) {
    auto nodes = nodes_of(proc.nspace, proc.rank);
    if (!nodes) return nodes.error();
    out.insert(nodes->begin(), nodes->end());
  }
  if (out.empty()) return make_error("a PMIx collective with no participant");
  return out;
}

}  // namespace lattice::agent
