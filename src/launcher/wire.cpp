#include "launcher/wire.hpp"

#include <algorithm>

#include "base/hostlist.hpp"
#include "proc/environment.hpp"
#include "rpc/bytes.hpp"

namespace lattice::launcher::wire {
namespace {

void set_list(capnp::List<capnp::Text>::Builder list, const std::vector<std::string>& values) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, values[i]);
}

void set_env(capnp::List<schema::EnvVar>::Builder list, const EnvList& values) {
  for (unsigned i = 0; i < list.size(); ++i) {
    list[i].setName(values[i].first);
    list[i].setValue(values[i].second);
  }
}

}  // namespace

LaunchNodes launch_nodes(std::vector<Peer> peers, const Layout& layout) {
  LaunchNodes nodes;
  std::vector<std::string> ids, hosts;
  std::vector<uint16_t> ports;
  for (const auto& peer : peers) {
    ids.push_back(peer.node_id);
    hosts.push_back(peer.host);
    ports.push_back(static_cast<uint16_t>(peer.port));
  }
  nodes.node_ids = compress_hostlist(ids);
  nodes.hosts = compress_hostlist(hosts);
  if (!nodes.node_ids || !nodes.hosts) {
    nodes.node_ids.reset();
    nodes.hosts.reset();
  } else if (std::all_of(ports.begin(), ports.end(), [&](uint16_t p) { return p == ports[0]; })) {
    nodes.ports = {ports.front()};
  } else {
    nodes.ports = std::move(ports);
  }
  nodes.ranks = lattice::wire::compact_rank_layout(layout.rank_nodes, layout.nodes);
  nodes.peers = std::move(peers);
  return nodes;
}

rpc::Outgoing launch_request(const LaunchOptions& options, const JobRequest& request,
                             const Layout& layout, const LaunchNodes& nodes, int node_index,
                             const std::string& workdir, const fabric::CxiCredentials* cxi) {
  rpc::Outgoing msg;
  auto req = msg.envelope().initBody().initLaunchProcesses();
  req.setLaunchId(request.launch_id);
  req.setAllocationId(options.alloc.empty() ? request.launch_id : options.alloc);
  auto user = req.initUser();
  user.setUid(request.user.uid);
  user.setGid(request.user.gid);
  user.setName(request.user.name);
  auto groups = user.initGroups(static_cast<unsigned>(request.user.groups.size()));
  for (unsigned i = 0; i < groups.size(); ++i) groups.set(i, request.user.groups[i]);
  req.setWorldSize(static_cast<uint32_t>(layout.ntasks));
  // One app travels in the seed's fields; MPMD as apps, each with its own --env.
  if (options.apps.size() == 1) {
    const App& app = options.apps.front();
    req.setEntrypoint(app.program);
    set_list(req.initArgs(static_cast<unsigned>(app.args.size())), app.args);
    const EnvList env = proc::merge_env(request.assigned, app.env);
    set_env(req.initEnv(static_cast<unsigned>(env.size())), env);
  } else {
    set_env(req.initEnv(static_cast<unsigned>(request.assigned.size())), request.assigned);
    auto apps = req.initApps(static_cast<unsigned>(options.apps.size()));
    for (unsigned a = 0; a < apps.size(); ++a) {
      const App& app = options.apps[a];
      apps[a].setEntrypoint(app.program);
      set_list(apps[a].initArgs(static_cast<unsigned>(app.args.size())), app.args);
      set_env(apps[a].initEnv(static_cast<unsigned>(app.env.size())), app.env);
      apps[a].setSize(static_cast<uint32_t>(app.segment_ranks()));
    }
  }
  set_env(req.initAppSetup().initEnvironment(static_cast<unsigned>(request.exported.size())),
          request.exported);
  req.setPmiMode(options.pmix ? schema::PmiMode::PMIX : schema::PmiMode::PMI2);
  if (nodes.node_ids) {
    auto compact = req.initPeerList();
    compact.setNodeIds(*nodes.node_ids);
    compact.setHosts(*nodes.hosts);
    auto ports = compact.initPorts(static_cast<unsigned>(nodes.ports.size()));
    for (unsigned i = 0; i < ports.size(); ++i) ports.set(i, nodes.ports[i]);
  } else {
    auto list = req.initPeers(static_cast<unsigned>(nodes.peers.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      list[i].setNodeId(nodes.peers[i].node_id);
      list[i].setHost(nodes.peers[i].host);
      list[i].setPort(static_cast<uint16_t>(nodes.peers[i].port));
    }
  }
  req.setHeadNodeIndex(static_cast<uint32_t>(layout.rank_nodes.front()));
  req.setNodeIndex(static_cast<uint32_t>(node_index));
  if (nodes.ranks) {
    auto rule = req.initRankLayout();
    rule.setCyclic(nodes.ranks->cyclic);
    auto blocks = rule.initBlocks(static_cast<unsigned>(nodes.ranks->blocks.size()));
    for (unsigned i = 0; i < blocks.size(); ++i) {
      blocks[i].setNodes(nodes.ranks->blocks[i].nodes);
      blocks[i].setRanksEach(nodes.ranks->blocks[i].ranks_each);
    }
  } else {
    auto rank_nodes = req.initRankNodes(static_cast<unsigned>(layout.rank_nodes.size()));
    for (unsigned i = 0; i < rank_nodes.size(); ++i)
      rank_nodes.set(i, static_cast<uint32_t>(layout.rank_nodes[i]));
  }
  req.setFenceTimeoutMs(options.fence_timeout_ms);
  req.setFanout(options.fanout);
  if (request.relayed) {
    req.setRelayed(true);
    req.setLauncherName(request.launcher_name);
  }
  req.setSlurmCompat(options.slurm_compat);
  req.setUsePmiPort(options.pmi_port);
  req.setWorkdir(workdir);
  req.setTimeLimitMs(options.time_limit_ms);
  req.setKillOnBadExit(options.kill_on_bad_exit);
  req.setInputRank(options.input_rank);
  auto inherit = req.initInherit();
  inherit.setUmask(static_cast<uint16_t>(request.umask & 0777));
  auto limits = inherit.initLimits(static_cast<unsigned>(request.limits.size()));
  for (unsigned i = 0; i < limits.size(); ++i) {
    limits[i].setResource(static_cast<schema::Resource>(request.limits[i].resource));
    limits[i].setSoft(request.limits[i].soft);
  }
  req.setCpuBind(options.cpu_bind);
  req.setRankScheduling(options.sched == "batch"    ? schema::RankScheduling::BATCH
                        : options.sched == "normal" ? schema::RankScheduling::NORMAL
                                                    : schema::RankScheduling::AUTO);
  if (cxi) {
    auto c = req.initCxiCredentials();
    c.setVni(cxi->vni);
    c.setSvcId(cxi->svc_id);
    c.setAuthKey(capnp::Data::Reader(cxi->auth_key.data(), cxi->auth_key.size()));
    msg.mark_secret();
  }
  return msg;
}

rpc::Outgoing stdin_chunk(const std::string& launch_id, std::string_view data, bool eof) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initStdinChunk();
  m.setLaunchId(launch_id);
  m.setData(rpc::as_data(data));
  m.setEof(eof);
  return msg;
}

rpc::Outgoing signal(const std::string& launch_id, int signum) {
  rpc::Outgoing msg;
  auto sig = msg.envelope().initBody().initSignalProcesses();
  sig.setLaunchId(launch_id);
  sig.setSignal(signum);
  return msg;
}

}  // namespace lattice::launcher::wire
