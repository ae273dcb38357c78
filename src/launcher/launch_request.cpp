#include "launcher/launch_request.hpp"

#include <algorithm>

#include "base/hostlist.hpp"
#include "base/log.hpp"
#include "launcher/job.hpp"
#include "launcher/pmix_app_setup.hpp"
#include "proc/environment.hpp"
#include "proc/resource_limits.hpp"

extern char** environ;

namespace lattice::launcher {
namespace {

// The peers as host lists, or nullopt when their names or hosts have none.
std::optional<wire::PeerList> peer_list(const std::vector<wire::PeerInfo>& peers) {
  std::vector<std::string> ids, hosts;
  std::vector<uint16_t> ports;
  for (const auto& peer : peers) {
    ids.push_back(peer.node_id);
    hosts.push_back(peer.host);
    ports.push_back(peer.port);
  }
  auto compact_ids = compress_hostlist(ids);
  auto compact_hosts = compress_hostlist(hosts);
  if (!compact_ids || !compact_hosts) return std::nullopt;
  if (std::all_of(ports.begin(), ports.end(), [&](uint16_t p) { return p == ports[0]; }))
    ports = {ports.front()};
  return wire::PeerList{std::move(*compact_ids), std::move(*compact_hosts), std::move(ports)};
}

}  // namespace

Result<JobRequest> job_request(const LaunchOptions& options, JobUserInfo user) {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);
  auto exported = export_environment(options.exports, environment);
  if (!exported) return exported.error();
  if (options.slurm_compat && !options.job_name.empty())  // -J, as srun passes it on
    exported->assigned.emplace_back("SLURM_JOB_NAME", options.job_name);
  JobRequest request{new_launch_id(), std::move(user), std::move(exported->harvested),
                     std::move(exported->assigned)};
  request.umask = proc::own_umask();
  request.limits = proc::own_soft_limits();
  if (options.pmi == wire::PmiMode::pmix) {
    auto setup = pmix_app_setup(request.launch_id, request.user.uid, options.exports);
    if (setup)
      request.pmix_setup = std::move(setup.value());
    else  // the agents can still serve the launch: only libpmix's fabric setup is missing
      LAT_LOG(warn, "pmix", "no PMIx setup data for the ranks: ", setup.error().message,
              log_fields({{"launch", request.launch_id}, {"uid", cat(request.user.uid)}}));
  }
  return request;
}

wire::LaunchRequest launch_request(const LaunchOptions& options, const JobRequest& request,
                                   const Layout& layout, const std::vector<wire::PeerInfo>& peers,
                                   const std::string& workdir, const fabric::CxiCredentials* cxi) {
  wire::LaunchRequest req;
  req.launch_id = request.launch_id;
  req.allocation_id = options.alloc;
  req.user =
      wire::JobUser{request.user.uid, request.user.gid, request.user.groups, request.user.name};
  req.world_size = static_cast<uint32_t>(layout.ntasks);
  req.spawned_by = request.spawned_by;
  // One app travels in the seed's fields; MPMD as apps, each with its own --env.
  if (options.apps.size() == 1) {
    const App& app = options.apps.front();
    req.entrypoint = app.program;
    req.args = app.args;
    req.env = proc::merge_env(request.assigned, app.env);
  } else {
    req.env = request.assigned;
    for (const App& app : options.apps)
      req.apps.push_back(wire::Application{app.program, app.args, app.env,
                                           static_cast<uint32_t>(app.segment_ranks())});
  }
  req.harvested = request.exported;
  req.vendor = request.pmix_setup;
  req.pmi = options.pmi;
  req.peer_list = peer_list(peers);
  if (!req.peer_list) req.peers = peers;
  req.head_node_index = static_cast<uint32_t>(layout.head());
  req.rank_layout = wire::compact_rank_layout(layout.rank_nodes, layout.nodes);
  if (!req.rank_layout) req.rank_nodes.assign(layout.rank_nodes.begin(), layout.rank_nodes.end());
  req.fence_timeout_ms = options.fence_timeout_ms;
  req.fanout = options.fanout;
  req.relayed = request.relayed;
  req.hatch_command = options.hatch_command;
  if (request.relayed) req.launcher_name = request.launcher_name;
  req.slurm_compat = options.slurm_compat;
  req.use_pmi_port = options.pmi_port;
  req.workdir = workdir;
  req.time_limit_ms = options.time_limit_ms;
  req.kill_on_bad_exit = options.kill_on_bad_exit;
  req.unbuffered = options.unbuffered;
  req.warn_signal = options.warn_signal;
  req.warn_before_ms = options.warn_before_ms;
  req.memory_bytes = options.memory_bytes;
  req.memory_per_cpu = options.memory_per_cpu;
  req.exclusive = options.exclusive;
  req.input_rank = options.input_rank;
  req.umask = request.umask & 0777;
  req.limits = request.limits;
  req.cpu_bind = options.cpu_bind;
  // As srun binds each task to its CPUs under -c, unless --cpu-bind says otherwise.
  if (options.cpus_per_task > 0 && !options.cpu_bind_given)
    req.cpu_bind.kind = proc::CpuBind::Kind::threads;
  req.cpus_per_task = static_cast<uint32_t>(options.cpus_per_task);
  req.gpus = options.gpus;
  req.scheduling = options.sched == "batch"    ? wire::RankScheduling::batch
                   : options.sched == "normal" ? wire::RankScheduling::normal
                                               : wire::RankScheduling::automatic;
  if (cxi) {
    // The lease's own key, not a copy (the launcher holds it once): `cxi` outlives the request.
    req.cxi.emplace(wire::CxiKey{
        cxi->vni, cxi->svc_id,
        std::shared_ptr<const secure::Secret>(std::shared_ptr<void>(), &cxi->auth_key)});
  }
  return req;
}

}  // namespace lattice::launcher
