#include "agent/launch_spec.hpp"

#include <algorithm>
#include <string_view>

#include "base/strings.hpp"
#include "config/config.hpp"
#include "proc/environment.hpp"
#include "secure/identity.hpp"
#include "wire/rank_layout.hpp"

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

Result<std::vector<int>> decode_rank_nodes(schema::LaunchProcessesRequest::Reader r, int world_size,
                                           int nnodes, int node_index) {
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
  if (r.hasRankLayout()) {
    auto blocks = r.getRankLayout().getBlocks();
    if (blocks.size() > static_cast<uint32_t>(nnodes))  // each block holds a node at least
      return make_error(cat("rankLayout has ", blocks.size(), " blocks for ", nnodes, " nodes"));
    lattice::wire::RankLayout layout;
    layout.cyclic = r.getRankLayout().getCyclic();
    for (auto block : blocks)
      layout.blocks.push_back(lattice::wire::NodeBlock{block.getNodes(), block.getRanksEach()});
    return lattice::wire::expand_rank_layout(layout, world_size, nnodes);
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

// Whether this agent may start processes as `user`, in the words of its refusal.
Status check_user(const JobUser& user, const LaunchDefaults& d) {
  if (user.name.empty()) return make_error("the request names no user to run the job as");
  if (d.agent_uid != 0 && user.uid != d.agent_uid)
    return make_error(cat("agent on ", d.node_id, " runs as uid ", d.agent_uid,
                          " and cannot start a job for ", user.name, " (uid ", user.uid, ")"));
  if (d.agent_uid == 0 && user.uid == 0 && !d.allow_root_jobs)
    return make_error(cat("agent on ", d.node_id,
                          " does not run jobs as root (set security.allow_root_jobs: true or "
                          "start it with --allow-root-jobs)"));
  return {};
}

Result<JobUser> decode_user(schema::LaunchProcessesRequest::Reader r) {
  if (!r.hasUser()) return make_error("the request names no user to run the job as");
  auto u = r.getUser();
  JobUser user;
  user.uid = u.getUid();
  user.gid = u.getGid();
  user.name = u.getName();
  if (u.hasGroups()) {
    user.groups.emplace();
    for (uint32_t g : u.getGroups()) user.groups->push_back(g);
  }
  // uid/gid -1 mean "unchanged" to the set*id calls.
  if (user.uid == UINT32_MAX || user.gid == UINT32_MAX)
    return make_error("the job's uid and gid must not be 4294967295");
  return user;
}

// apps (MPMD) or else entrypoint + args as the one app of every rank. Each app's env is checked
// as the request's is.
Result<std::vector<App>> decode_apps(schema::LaunchProcessesRequest::Reader r, int world_size,
                                     const proc::EnvRules& rules) {
  std::vector<App> apps;
  if (!r.hasApps() || r.getApps().size() == 0) {
    App app{r.getEntrypoint(), {}, {}, 0, world_size};
    for (auto arg : r.getArgs()) app.args.emplace_back(arg);
    if (app.entrypoint.empty()) return make_error("no entrypoint given");
    apps.push_back(std::move(app));
    return apps;
  }
  if (r.getEntrypoint().size() > 0 || r.getArgs().size() > 0)
    return make_error("a request with apps must leave entrypoint and args empty");
  if (r.getApps().size() > static_cast<uint32_t>(world_size))
    return make_error(cat(r.getApps().size(), " apps for ", world_size, " ranks"));
  int next = 0;
  for (auto a : r.getApps()) {
    App app{a.getEntrypoint(), {}, {}, next, static_cast<int>(a.getSize())};
    if (app.entrypoint.empty()) return make_error(cat("app ", apps.size(), " has no entrypoint"));
    if (a.getSize() == 0 || a.getSize() > static_cast<uint32_t>(world_size - next))
      return make_error(cat("app ", apps.size(), " has ", a.getSize(), " ranks, but ",
                            world_size - next, " of the world's ", world_size, " are left"));
    for (auto arg : a.getArgs()) app.args.emplace_back(arg);
    for (auto var : a.getEnv()) app.env.emplace_back(var.getName(), var.getValue());
    if (auto checked = proc::check_request_env(app.env, rules); !checked) return checked.error();
    next += app.size;
    apps.push_back(std::move(app));
  }
  if (next != world_size)
    return make_error(cat("the apps hold ", next, " ranks, but the world has ", world_size));
  return apps;
}

Result<std::optional<CxiCredentials>> decode_cxi(schema::LaunchProcessesRequest::Reader r) {
  if (!r.hasCxiCredentials()) return std::optional<CxiCredentials>();
  auto c = r.getCxiCredentials();
  auto key = c.getAuthKey();
  if (key.size() == 0) return std::optional<CxiCredentials>();
  if (key.size() > kMaxCxiKeyBytes)
    return make_error(
        cat("a CXI auth key of ", key.size(), " bytes (at most ", kMaxCxiKeyBytes, ")"));
  static constexpr char kDigits[] = "0123456789abcdef";
  CxiCredentials cxi{c.getVni(), c.getSvcId(), secure::Secret(2 * key.size() + 1)};
  for (size_t i = 0; i < key.size(); ++i) {
    cxi.auth_key_hex.data()[2 * i] = static_cast<uint8_t>(kDigits[key[i] >> 4]);
    cxi.auth_key_hex.data()[2 * i + 1] = static_cast<uint8_t>(kDigits[key[i] & 0xf]);
  }
  return std::optional<CxiCredentials>(std::move(cxi));
}

}  // namespace

int LaunchSpec::app_of(int rank) const {
  auto it = std::upper_bound(apps.begin(), apps.end(), rank,
                             [](int r, const App& app) { return r < app.first_rank; });
  return static_cast<int>(it - apps.begin()) - 1;
}

bool LaunchSpec::ranks_batch(size_t local_ranks, size_t cpus) const {
  return sched == RankScheduling::batch ||
         (sched == RankScheduling::automatic && local_ranks > cpus);
}

fence::Tree LaunchSpec::fence_tree() const {
  return fence::Tree(nnodes(), head_node, static_cast<int>(fanout));
}

std::vector<int> LaunchSpec::local_ranks() const {
  std::vector<int> out;
  for (int rank = 0; rank < world_size; ++rank)
    if (rank_nodes[static_cast<size_t>(rank)] == node_index) out.push_back(rank);
  return out;
}

namespace {

// The peers, from the list or from the compact host lists (no more nodes than ranks: each node
// of a launch holds one at least, so the world size bounds either form before it is copied).
Result<PeerTable> decode_peers(schema::LaunchProcessesRequest::Reader r, int world_size) {
  if (r.getPeers().size() > 0 || !r.hasPeerList()) {
    if (r.getPeers().size() > static_cast<size_t>(world_size))
      return make_error(cat("peers: ", r.getPeers().size(), " nodes for a world of ", world_size,
                            " ranks (each node holds one at least)"));
    std::vector<Peer> peers;
    for (auto peer : r.getPeers())
      peers.push_back(Peer{peer.getNodeId(), peer.getHost(), peer.getPort()});
    return PeerTable(peers);
  }
  auto compact = r.getPeerList();
  auto text = [](capnp::Text::Reader t) { return std::string_view(t.begin(), t.size()); };
  std::vector<uint16_t> ports;
  for (uint16_t port : compact.getPorts()) ports.push_back(port);
  return PeerTable::compact(text(compact.getNodeIds()), text(compact.getHosts()), std::move(ports),
                            static_cast<size_t>(world_size));
}

}  // namespace

Result<LaunchSpec> decode_launch_request(schema::LaunchProcessesRequest::Reader r,
                                         const LaunchDefaults& defaults) {
  LaunchSpec spec;
  spec.launch_id = r.getLaunchId();
  if (!path_safe(spec.launch_id))
    return make_error("launchId must be 1-64 characters of [A-Za-z0-9._-], not starting with '.'");
  spec.pmix = r.getPmiMode() == schema::PmiMode::PMIX;
  spec.allocation_id = r.getAllocationId();
  if (r.getWorldSize() == 0 || r.getWorldSize() > defaults.max_world_size)
    return make_error(cat("a world of ", r.getWorldSize(), " ranks is refused by ",
                          defaults.node_id, " (limits.max_world_size is ", defaults.max_world_size,
                          ")"));
  spec.world_size = static_cast<int>(r.getWorldSize());

  auto peers = decode_peers(r, spec.world_size);
  if (!peers) return peers.error();
  spec.peers = std::move(peers.value());
  if (spec.peers.empty()) spec.peers = PeerTable({Peer{defaults.node_id, "", 0}});
  // Node ids are how links are matched to launch members: each must name one node.
  if (auto twice = spec.peers.duplicate())
    return make_error(cat("node id '", *twice, "' appears twice among the peers"));
  if (r.getNodeIndex() >= spec.peers.size())
    return make_error(
        cat("nodeIndex ", r.getNodeIndex(), " is outside the ", spec.peers.size(), " peers"));
  if (r.getHeadNodeIndex() >= spec.peers.size())
    return make_error(cat("headNodeIndex ", r.getHeadNodeIndex(), " is outside the peers"));
  spec.node_index = static_cast<int>(r.getNodeIndex());
  if (auto self = spec.peers[static_cast<size_t>(spec.node_index)].node_id;
      self != defaults.node_id)
    return make_error(cat("the request addresses this agent as node '", self, "', but it is '",
                          defaults.node_id, "'"));
  spec.head_node = static_cast<int>(r.getHeadNodeIndex());

  auto nodes = decode_rank_nodes(r, spec.world_size, spec.nnodes(), spec.node_index);
  if (!nodes) return nodes.error();
  spec.rank_nodes = std::move(nodes.value());
  size_t local = spec.local_ranks().size();
  if (local == 0) return make_error(cat("the layout gives node ", spec.node_index, " no ranks"));
  if (local > defaults.max_ranks_per_node)
    return make_error(cat(local, " ranks on ", defaults.node_id,
                          " are refused (limits.max_ranks_per_node is ",
                          defaults.max_ranks_per_node, ")"));

  auto user = decode_user(r);
  if (!user) return user.error();
  if (auto allowed = check_user(*user, defaults); !allowed) return allowed.error();
  spec.user = std::move(user.value());

  std::vector<std::pair<std::string, std::string>> harvested, explicit_env;
  auto setup = r.getAppSetup();
  if (setup.getVendor().size() > 0)
    return make_error(cat("vendor setup data (PMIx_server_setup_application) is not supported by ",
                          defaults.node_id, " yet"));
  for (auto var : setup.getEnvironment()) harvested.emplace_back(var.getName(), var.getValue());
  for (auto var : r.getEnv()) explicit_env.emplace_back(var.getName(), var.getValue());
  // Hooks are refused where the request names them (--env, --export NAME=VALUE) and left out
  // with a word to the launcher where --export took them from its environment.
  const proc::EnvRules rules{spec.user.uid == 0, defaults.root_env_allowed};
  auto left_out = proc::leave_out_hooks(harvested, rules);
  if (!left_out) return left_out.error();
  spec.env_left_out = std::move(left_out.value());
  if (auto env = proc::check_request_env(explicit_env, rules); !env) return env.error();
  spec.env = proc::merge_env(harvested, explicit_env);
  auto apps = decode_apps(r, spec.world_size, rules);
  if (!apps) return apps.error();
  spec.apps = std::move(apps.value());
  spec.fence_timeout_ms = r.getFenceTimeoutMs() ? r.getFenceTimeoutMs() : defaults.fence_timeout_ms;
  // Not this agent's own choice: agents configured differently would build different trees.
  spec.fanout = r.getFanout() ? r.getFanout() : config::kDefaultFanout;
  if (spec.fanout > config::kMaxFanout)  // (before, one past INT_MAX failed an assertion)
    return make_error(
        cat("a fence fanout of ", spec.fanout, " (at most ", config::kMaxFanout, ")"));
  spec.slurm_compat = r.getSlurmCompat() || defaults.slurm_compat;
  spec.use_pmi_port = r.getUsePmiPort();
  spec.workdir = r.getWorkdir();
  spec.time_limit_ms = r.getTimeLimitMs();
  spec.kill_on_bad_exit = r.getKillOnBadExit();
  auto bind = proc::parse_cpu_bind(r.getCpuBind().cStr());
  if (!bind) return bind.error();
  spec.cpu_bind = std::move(bind.value());
  switch (r.getRankScheduling()) {
    case schema::RankScheduling::NORMAL:
      spec.sched = RankScheduling::normal;
      break;
    case schema::RankScheduling::BATCH:
      spec.sched = RankScheduling::batch;
      break;
    default:  // AUTO, and values a newer launcher may add
      spec.sched = RankScheduling::automatic;
  }
  auto cxi = decode_cxi(r);
  if (!cxi) return cxi.error();
  spec.cxi = std::move(cxi.value());
  spec.relayed = r.getRelayed();
  if (spec.relayed) {
    // Every agent of the launch works out the same tree from the request alone.
    if (!r.getFanout()) return make_error("a relayed launch must name its fence fanout");
    spec.launcher_name = r.getLauncherName();
    if (!secure::valid_identity_name(spec.launcher_name))
      return make_error("a relayed launch must name its launcher (launcherName)");
  }
  if (r.hasInherit()) {
    auto inherit = r.getInherit();
    spec.umask = inherit.getUmask() & 0777u;
    for (auto limit : inherit.getLimits()) {
      // A resource a newer launcher knows and this agent does not is left alone.
      auto raw = static_cast<int>(limit.getResource());
      if (raw < 0 || raw >= proc::kResourceCount) continue;
      auto resource = static_cast<proc::Resource>(raw);
      if (std::find(defaults.propagated.begin(), defaults.propagated.end(), resource) !=
          defaults.propagated.end())
        spec.limits.push_back(proc::Limit{resource, limit.getSoft()});
    }
  }
  spec.input_rank = r.getInputRank();
  if (spec.input_rank < -2 || spec.input_rank >= spec.world_size)
    return make_error(cat("inputRank ", spec.input_rank, " is neither a rank, -1 (all) nor -2"));
  return spec;
}

}  // namespace lattice::agent
