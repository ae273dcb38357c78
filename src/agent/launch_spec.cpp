#include "agent/launch_spec.hpp"

#include "base/strings.hpp"

namespace lattice::agent {
namespace {

bool path_safe(const std::string& id) {
  if (id.empty() || id.size() > kMaxLaunchIdLength || id[0] == '.') return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<std::vector<int>> decode_rank_nodes(schema::LaunchProcessesRequest::Reader r,
                                           int world_size, int nnodes, int node_index) {
  std::vector<int> nodes;
  if (r.hasRankNodes() && r.getRankNodes().size() > 0) {
    auto list = r.getRankNodes();
    if (static_cast<int>(list.size()) != world_size)
      return make_error(cat("rankNodes has ", list.size(), " entries for worldSize ", world_size));
    for (uint32_t n : list) {
      if (n >= static_cast<uint32_t>(nnodes))
        return make_error(cat("rankNodes names node ", n, " but the launch has ", nnodes));
      nodes.push_back(static_cast<int>(n));
    }
    return nodes;
  }
  // Block shorthand: this node holds [firstRank, firstRank + tasksPerNode); every node is
  // assumed to hold tasksPerNode ranks (the last one fewer).
  uint64_t per_node = r.getTasksPerNode();
  if (per_node == 0) return make_error("tasksPerNode is 0 and no rankNodes given");
  if (static_cast<uint64_t>(node_index) * per_node != r.getFirstRank())
    return make_error(cat("firstRank ", r.getFirstRank(), " does not match a block layout of ",
                          per_node, " ranks per node at node ", node_index));
  for (int rank = 0; rank < world_size; ++rank) {
    auto node = static_cast<int>(static_cast<uint64_t>(rank) / per_node);
    if (node >= nnodes) return make_error("tasksPerNode * nodes is less than worldSize");
    nodes.push_back(node);
  }
  return nodes;
}

}  // namespace

std::vector<int> LaunchSpec::local_ranks() const {
  std::vector<int> out;
  for (int rank = 0; rank < world_size; ++rank)
    if (rank_nodes[static_cast<size_t>(rank)] == node_index) out.push_back(rank);
  return out;
}

std::string LaunchSpec::nodelist() const {
  std::string out;
  for (const auto& peer : peers) out += (out.empty() ? "" : ",") + peer.node_id;
  return out;
}

Result<LaunchSpec> decode_launch_request(schema::LaunchProcessesRequest::Reader r,
                                         const LaunchDefaults& defaults) {
  LaunchSpec spec;
  spec.launch_id = r.getLaunchId();
  if (!path_safe(spec.launch_id))
    return make_error("launchId must be 1-64 characters of [A-Za-z0-9._-], not starting with '.'");
  if (r.getPmiMode() == schema::PmiMode::PMIX)
    return make_error("PMIx (--pmi pmix) is not available in this build");
  spec.allocation_id = r.getAllocationId();
  spec.entrypoint = r.getEntrypoint();
  if (spec.entrypoint.empty()) return make_error("no entrypoint given");
  for (auto arg : r.getArgs()) spec.args.emplace_back(arg);
  if (r.getWorldSize() == 0 || r.getWorldSize() > static_cast<uint32_t>(kMaxWorldSize))
    return make_error(cat("worldSize must be 1..", kMaxWorldSize, ", got ", r.getWorldSize()));
  spec.world_size = static_cast<int>(r.getWorldSize());

  for (auto peer : r.getPeers())
    spec.peers.push_back(Peer{peer.getNodeId(), peer.getHost(), peer.getPort()});
  if (spec.peers.empty()) spec.peers.push_back(Peer{defaults.node_id, "", 0});
  if (r.getNodeIndex() >= spec.peers.size())
    return make_error(cat("nodeIndex ", r.getNodeIndex(), " is outside the ", spec.peers.size(),
                          " peers"));
  if (r.getHeadNodeIndex() >= spec.peers.size())
    return make_error(cat("headNodeIndex ", r.getHeadNodeIndex(), " is outside the peers"));
  spec.node_index = static_cast<int>(r.getNodeIndex());
  spec.head_node = static_cast<int>(r.getHeadNodeIndex());

  auto nodes = decode_rank_nodes(r, spec.world_size, spec.nnodes(), spec.node_index);
  if (!nodes) return nodes.error();
  spec.rank_nodes = std::move(nodes.value());
  if (spec.local_ranks().empty())
    return make_error(cat("the layout gives node ", spec.node_index, " no ranks"));

  for (auto var : r.getEnv()) {
    std::string name = var.getName();
    if (name.empty() || name.find('=') != std::string::npos)
      return make_error(cat("bad environment variable name '", name, "'"));
    spec.env.emplace_back(std::move(name), var.getValue());
  }
  spec.fence_timeout_ms = r.getFenceTimeoutMs() ? r.getFenceTimeoutMs() : defaults.fence_timeout_ms;
  spec.fanout = r.getFanout() ? r.getFanout() : defaults.fanout;
  spec.slurm_compat = r.getSlurmCompat() || defaults.slurm_compat;
  spec.use_pmi_port = r.getUsePmiPort();
  spec.workdir = r.getWorkdir();
  return spec;
}

}  // namespace lattice::agent
