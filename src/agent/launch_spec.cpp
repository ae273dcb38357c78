#include "agent/launch_spec.hpp"

#include <algorithm>
#include <cctype>

#include "base/strings.hpp"
#include "config/config.hpp"
#include "pmix/app_setup.hpp"
#include "proc/environment.hpp"
#include "secure/identity.hpp"

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

Result<std::vector<int>> rank_nodes_of(const wire::LaunchRequest& r, int world_size, int nnodes,
                                       int node_index) {
  std::vector<int> nodes;
  if (!r.rank_nodes.empty()) {
    const auto& list = r.rank_nodes;
    if (static_cast<int>(list.size()) != world_size)
      return make_error(cat("rankNodes has ", list.size(), " entries for worldSize ", world_size));
    for (uint32_t n : list) {
      if (n >= static_cast<uint32_t>(nnodes))
        return make_error(cat("rankNodes names node ", n, " but the launch has ", nnodes));
      nodes.push_back(static_cast<int>(n));
    }
    return nodes;
  }
  if (r.rank_layout) {
    const auto& blocks = r.rank_layout->blocks;
    if (blocks.size() > static_cast<size_t>(nnodes))  // each block holds a node at least
      return make_error(cat("rankLayout has ", blocks.size(), " blocks for ", nnodes, " nodes"));
    return wire::expand_rank_layout(*r.rank_layout, world_size, nnodes);
  }
  // Block shorthand: this node holds [firstRank, firstRank + tasksPerNode); every node is
  // assumed to hold tasksPerNode ranks (the last one fewer).
  uint64_t per_node = r.tasks_per_node;
  if (per_node == 0) return make_error("tasksPerNode is 0 and no rankNodes given");
  if (static_cast<uint64_t>(node_index) * per_node != r.first_rank)
    return make_error(cat("firstRank ", r.first_rank, " does not match a block layout of ",
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

Result<JobUser> user_of(const wire::LaunchRequest& r) {
  if (!r.user) return make_error("the request names no user to run the job as");
  // uid/gid -1 mean "unchanged" to the set*id calls.
  if (r.user->uid == UINT32_MAX || r.user->gid == UINT32_MAX)
    return make_error("the job's uid and gid must not be 4294967295");
  return *r.user;
}

// apps (MPMD) or else entrypoint + args as the one app of every rank. Each app's env is checked
// as the request's is.
Result<std::vector<App>> apps_of(const wire::LaunchRequest& r, int world_size,
                                 const proc::EnvRules& rules) {
  std::vector<App> apps;
  if (r.apps.empty()) {
    if (r.entrypoint.empty()) return make_error("no entrypoint given");
    apps.push_back(App{r.entrypoint, r.args, {}, 0, world_size});
    return apps;
  }
  if (!r.entrypoint.empty() || !r.args.empty())
    return make_error("a request with apps must leave entrypoint and args empty");
  int next = 0;
  for (const auto& a : r.apps) {
    App app{a.entrypoint, a.args, a.env, next, static_cast<int>(a.size)};
    if (app.entrypoint.empty()) return make_error(cat("app ", apps.size(), " has no entrypoint"));
    if (a.size == 0 || a.size > static_cast<uint32_t>(world_size - next))
      return make_error(cat("app ", apps.size(), " has ", a.size, " ranks, but ", world_size - next,
                            " of the world's ", world_size, " are left"));
    if (auto checked = proc::check_request_env(app.env, rules); !checked) return checked.error();
    next += app.size;
    apps.push_back(std::move(app));
  }
  if (next != world_size)
    return make_error(cat("the apps hold ", next, " ranks, but the world has ", world_size));
  return apps;
}

// The key as the hex its ranks get.
CxiCredentials cxi_of(const wire::CxiKey& c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const secure::Secret& key = *c.auth_key;
  CxiCredentials cxi{c.vni, c.svc_id, secure::Secret(2 * key.size() + 1)};
  for (size_t i = 0; i < key.size(); ++i) {
    cxi.auth_key_hex.data()[2 * i] = static_cast<uint8_t>(kDigits[key.data()[i] >> 4]);
    cxi.auth_key_hex.data()[2 * i + 1] = static_cast<uint8_t>(kDigits[key.data()[i] & 0xf]);
  }
  return cxi;
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

// The peers, from the list (no longer than the world and a relaying head: the decoder saw to
// it) or from the compact host lists, expanded no further than that either (each node of a
// launch holds one rank at least, but a relaying head: launch_spec.hpp).
Result<PeerTable> peers_of(const wire::LaunchRequest& r, int world_size) {
  if (!r.peers.empty() || !r.peer_list) {
    std::vector<Peer> peers;
    for (const auto& peer : r.peers) peers.push_back(Peer{peer.node_id, peer.host, peer.port});
    return PeerTable(peers);
  }
  const wire::PeerList& compact = *r.peer_list;
  return PeerTable::compact(compact.node_ids, compact.hosts, compact.ports,
                            static_cast<size_t>(world_size) + 1);
}

}  // namespace

Result<uint64_t> node_memory_limit(const wire::LaunchRequest& r, size_t local_ranks) {
  if (r.memory_bytes && r.memory_per_cpu)
    return make_error("memoryBytes and memoryPerCpu (--mem, --mem-per-cpu) are mutually exclusive");
  // Bounded as the launcher bounds a size (2^62 bytes), so that no product wraps.
  constexpr uint64_t kMax = uint64_t{1} << 62;
  if (r.memory_bytes > kMax || r.memory_per_cpu > kMax)
    return make_error("a memory limit over 2^62 bytes is refused");
  if (!r.memory_per_cpu) return r.memory_bytes;
  const uint64_t cpus = uint64_t{std::max<uint32_t>(1, r.cpus_per_task)} * local_ranks;
  if (cpus && r.memory_per_cpu > kMax / cpus)
    return make_error(cat("--mem-per-cpu ", size_text(r.memory_per_cpu), " times ", cpus,
                          " CPUs is over 2^62 bytes"));
  return r.memory_per_cpu * cpus;
}

namespace {

// RFC0029's setup data (pmix/app_setup.hpp): for a PMIx launch only, each entry one of libpmix's
// own settings (PMIX_MCA_*), which the ranks get as if the request named them, except that the
// name is PMIx's to give; for a root job those naming plugins are hooks (proc/environment.hpp).
Result<std::vector<pmix::SetupEntry>> pmix_setup_of(const wire::LaunchRequest& r, wire::PmiMode pmi,
                                                    const proc::EnvRules& rules) {
  if (r.vendor.empty()) return std::vector<pmix::SetupEntry>{};
  if (pmi != wire::PmiMode::pmix)
    return make_error("PMIx setup data (AppSetup.vendor) in a launch that is not --pmi pmix");
  auto entries = pmix::decode_app_setup(r.vendor);
  if (!entries) return entries.error();
  for (const auto& entry : *entries) {
    if (entry.key != pmix::kSetEnvarKey || entry.envars.size() != 1)
      return make_error(
          cat("PMIx setup data under '", entry.key, "', which Lattice does not carry"));
    const auto& e = entry.envars.front();
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (!starts_with(e.name, pmix::kForwardedPrefix) ||
        e.name.size() == std::string_view(pmix::kForwardedPrefix).size() ||
        !std::all_of(e.name.begin(), e.name.end(), word))
      return make_error(cat("PMIx setup data may set libpmix's settings (", pmix::kForwardedPrefix,
                            "*) only, not ", e.name));
    if (std::string refusal = rules.hook_refusal(e.name, e.value); !refusal.empty())
      return make_error(cat("PMIx setup data: ", refusal));
  }
  return entries;
}

}  // namespace

Result<LaunchSpec> make_launch_spec(const wire::LaunchRequest& r, const LaunchDefaults& defaults) {
  LaunchSpec spec;
  spec.launch_id = r.launch_id;
  if (!path_safe(spec.launch_id))
    return make_error("launchId must be 1-64 characters of [A-Za-z0-9._-], not starting with '.'");
  spec.pmi = r.pmi;
  spec.hatch_command = r.hatch_command;
  spec.allocation_id = r.allocation_id;
  if (r.world_size == 0 || r.world_size > defaults.max_world_size)
    return make_error(cat("a world of ", r.world_size, " ranks is refused by ", defaults.node_id,
                          " (limits.max_world_size is ", defaults.max_world_size, ")"));
  spec.world_size = static_cast<int>(r.world_size);

  auto peers = peers_of(r, spec.world_size);
  if (!peers) return peers.error();
  spec.peers = std::move(peers.value());
  if (spec.peers.empty()) spec.peers = PeerTable({Peer{defaults.node_id, "", 0}});
  // Node ids are how links are matched to launch members: each must name one node.
  if (auto twice = spec.peers.duplicate())
    return make_error(cat("node id '", *twice, "' appears twice among the peers"));
  if (r.node_index >= spec.peers.size())
    return make_error(
        cat("nodeIndex ", r.node_index, " is outside the ", spec.peers.size(), " peers"));
  if (r.head_node_index >= spec.peers.size())
    return make_error(cat("headNodeIndex ", r.head_node_index, " is outside the peers"));
  spec.node_index = static_cast<int>(r.node_index);
  if (auto self = spec.peers[static_cast<size_t>(spec.node_index)].node_id;
      self != defaults.node_id)
    return make_error(cat("the request addresses this agent as node '", self, "', but it is '",
                          defaults.node_id, "'"));
  spec.head_node = static_cast<int>(r.head_node_index);

  auto nodes = rank_nodes_of(r, spec.world_size, spec.nnodes(), spec.node_index);
  if (!nodes) return nodes.error();
  spec.rank_nodes = std::move(nodes.value());
  size_t local = spec.local_ranks().size();
  // A launch without PMI may leave its head none: the user door's node relaying a command its
  // allocation's MPI launcher runs elsewhere (launch_hatch.hpp).
  const bool relaying_head = spec.pmi == wire::PmiMode::none && spec.node_index == spec.head_node;
  if (local == 0 && !relaying_head)
    return make_error(cat("the layout gives node ", spec.node_index, " no ranks"));
  if (local > defaults.max_ranks_per_node)
    return make_error(cat(local, " ranks on ", defaults.node_id,
                          " are refused (limits.max_ranks_per_node is ",
                          defaults.max_ranks_per_node, ")"));

  auto user = user_of(r);
  if (!user) return user.error();
  if (auto allowed = check_user(*user, defaults); !allowed) return allowed.error();
  spec.user = std::move(user.value());

  std::vector<std::pair<std::string, std::string>> harvested = r.harvested;
  // Hooks are refused where the request names them (--env, --export NAME=VALUE) and left out
  // with a word to the launcher where --export took them from its environment.
  const proc::EnvRules rules{spec.user.uid == 0, defaults.root_env_allowed};
  auto setup = pmix_setup_of(r, spec.pmi, rules);
  if (!setup) return setup.error();
  spec.pmix_setup = std::move(setup.value());
  auto left_out = proc::leave_out_hooks(harvested, rules);
  if (!left_out) return left_out.error();
  spec.env_left_out = std::move(left_out.value());
  if (auto env = proc::check_request_env(r.env, rules); !env) return env.error();
  spec.env = proc::merge_env(harvested, r.env);
  auto apps = apps_of(r, spec.world_size, rules);
  if (!apps) return apps.error();
  spec.apps = std::move(apps.value());
  spec.fence_timeout_ms = r.fence_timeout_ms ? r.fence_timeout_ms : defaults.fence_timeout_ms;
  // Not this agent's own choice: agents configured differently would build different trees.
  spec.fanout = r.fanout ? r.fanout : config::kDefaultFanout;
  if (spec.fanout > config::kMaxFanout)  // (before, one past INT_MAX failed an assertion)
    return make_error(
        cat("a fence fanout of ", spec.fanout, " (at most ", config::kMaxFanout, ")"));
  spec.slurm_compat = r.slurm_compat || defaults.slurm_compat;
  spec.use_pmi_port = r.use_pmi_port;
  spec.workdir = r.workdir;
  spec.time_limit_ms = r.time_limit_ms;
  spec.kill_on_bad_exit = r.kill_on_bad_exit;
  spec.warn_signal = r.warn_signal;
  spec.warn_before_ms = r.warn_before_ms;
  spec.unbuffered = r.unbuffered;
  spec.cpu_bind = r.cpu_bind;
  spec.cpus_per_task = static_cast<int>(r.cpus_per_task);
  spec.gpus = r.gpus;
  spec.sched = r.scheduling;
  if (r.cxi) spec.cxi = cxi_of(*r.cxi);
  spec.relayed = r.relayed;
  if (spec.relayed) {
    // Every agent of the launch works out the same tree from the request alone.
    if (!r.fanout) return make_error("a relayed launch must name its fence fanout");
    spec.launcher_name = r.launcher_name;
    if (!secure::valid_identity_name(spec.launcher_name))
      return make_error("a relayed launch must name its launcher (launcherName)");
  }
  spec.umask = r.umask;
  for (const proc::Limit& limit : r.limits)
    if (std::find(defaults.propagated.begin(), defaults.propagated.end(), limit.resource) !=
        defaults.propagated.end())
      spec.limits.push_back(limit);
  spec.input_rank = r.input_rank;
  if (spec.input_rank < -2 || spec.input_rank >= spec.world_size)
    return make_error(cat("inputRank ", spec.input_rank, " is neither a rank, -1 (all) nor -2"));
  auto memory = node_memory_limit(r, local);
  if (!memory) return memory.error();
  spec.memory_bytes = *memory;
  spec.exclusive = r.exclusive;
  return spec;
}

}  // namespace lattice::agent
