#include "wire/launch_request.hpp"

#include <algorithm>
#include <cstring>

#include "base/strings.hpp"
#include "rpc/bytes.hpp"
#include "wire/texts.hpp"

namespace lattice::wire {
namespace {

// The schema's CpuBindKind and proc::CpuBind::Kind name the same kinds in the same order, and so
// do GpuBindKind and proc::GpuRequest::Bind.
static_assert(static_cast<int>(schema::CpuBindKind::MASK_CPU) ==
              static_cast<int>(proc::CpuBind::Kind::mask_cpu));
static_assert(static_cast<int>(schema::GpuBindKind::MAP_GPU) ==
              static_cast<int>(proc::GpuRequest::Bind::map_gpu));

void set_env(capnp::List<schema::EnvVar>::Builder list, const EnvList& values) {
  for (unsigned i = 0; i < list.size(); ++i) {
    list[i].setName(values[i].first);
    list[i].setValue(values[i].second);
  }
}

EnvList env_of(capnp::List<schema::EnvVar>::Reader list) {
  EnvList out;
  out.reserve(list.size());
  for (auto var : list) out.emplace_back(var.getName(), var.getValue());
  return out;
}

}  // namespace

void encode_apps(capnp::List<schema::Application>::Builder list,
                 const std::vector<Application>& apps) {
  for (unsigned a = 0; a < list.size(); ++a) {
    const Application& app = apps[a];
    list[a].setEntrypoint(app.entrypoint);
    set_texts(list[a].initArgs(static_cast<unsigned>(app.args.size())), app.args);
    set_env(list[a].initEnv(static_cast<unsigned>(app.env.size())), app.env);
    list[a].setSize(app.size);
  }
}

std::vector<Application> apps_of(capnp::List<schema::Application>::Reader list) {
  std::vector<Application> out;
  out.reserve(list.size());
  for (auto a : list)
    out.push_back(
        Application{a.getEntrypoint(), texts_of(a.getArgs()), env_of(a.getEnv()), a.getSize()});
  return out;
}

namespace {

void encode_cpu_bind(const proc::CpuBind& bind, schema::CpuBinding::Builder out) {
  out.setKind(static_cast<schema::CpuBindKind>(bind.kind));
  auto cpus = out.initCpus(static_cast<unsigned>(bind.map.size()));
  for (unsigned i = 0; i < cpus.size(); ++i) cpus.set(i, static_cast<uint32_t>(bind.map[i]));
  if (bind.masks.empty()) return;
  auto masks = out.initMasks(static_cast<unsigned>(bind.masks.size()));
  for (unsigned m = 0; m < masks.size(); ++m) {
    auto mask = masks.init(m, static_cast<unsigned>(bind.masks[m].size()));
    for (unsigned i = 0; i < mask.size(); ++i) mask.set(i, static_cast<uint32_t>(bind.masks[m][i]));
  }
}

// CPU numbers as the launcher's --cpu-bind would have parsed them: some, each one it accepts.
Result<std::vector<int>> cpu_numbers(capnp::List<uint32_t>::Reader in, const char* what) {
  if (in.size() == 0) return make_error(cat("cpuBind: ", what, " without CPUs"));
  std::vector<int> out;
  out.reserve(in.size());
  for (uint32_t cpu : in) {
    if (cpu >= static_cast<uint32_t>(proc::kMaxCpus))
      return make_error(cat("cpuBind: ", cpu, " in ", what, " is not a CPU number"));
    out.push_back(static_cast<int>(cpu));
  }
  return out;
}

// As the launcher's --cpu-bind would have parsed it: a kind this side knows, and for map_cpu
// and mask_cpu lists of CPU numbers it accepts.
Result<proc::CpuBind> decode_cpu_bind(schema::CpuBinding::Reader in) {
  using Kind = proc::CpuBind::Kind;
  proc::CpuBind bind;
  auto raw = static_cast<int>(in.getKind());
  if (raw > static_cast<int>(Kind::mask_cpu))
    return make_error(cat("cpuBind: a binding of kind ", raw, " is unknown to this agent"));
  bind.kind = static_cast<Kind>(raw);
  if (bind.kind == Kind::map_cpu) {
    auto cpus = cpu_numbers(in.getCpus(), "map_cpu");
    if (!cpus) return cpus.error();
    bind.map = std::move(cpus.value());
  } else if (bind.kind == Kind::mask_cpu) {
    if (in.getMasks().size() == 0) return make_error("cpuBind: mask_cpu without masks");
    for (auto mask : in.getMasks()) {
      auto cpus = cpu_numbers(mask, "a mask");
      if (!cpus) return cpus.error();
      std::sort(cpus->begin(), cpus->end());
      cpus->erase(std::unique(cpus->begin(), cpus->end()), cpus->end());
      bind.masks.push_back(std::move(cpus.value()));
    }
  }
  return bind;
}

void encode_gpus(const proc::GpuRequest& gpus, schema::LaunchProcessesRequest::Builder req) {
  if (!gpus.any()) return;
  auto out = req.initGpus();
  out.setPerTask(static_cast<uint32_t>(gpus.per_task));
  out.setPerNode(static_cast<uint32_t>(gpus.per_node));
  out.setBind(static_cast<schema::GpuBindKind>(gpus.bind));
  auto map = out.initMap(static_cast<unsigned>(gpus.map.size()));
  for (unsigned i = 0; i < map.size(); ++i) map.set(i, static_cast<uint32_t>(gpus.map[i]));
}

// As the launcher's options would have made it (proc::check_gpu_request's rules).
Result<proc::GpuRequest> decode_gpus(schema::GpuRequest::Reader in) {
  using Bind = proc::GpuRequest::Bind;
  proc::GpuRequest gpus;
  constexpr auto kMax = static_cast<uint32_t>(proc::kMaxGpus);
  if (in.getPerTask() > kMax || in.getPerNode() > kMax)
    return make_error(cat("gpus: ", std::max(in.getPerTask(), in.getPerNode()),
                          " GPUs on a node (at most ", kMax, ")"));
  gpus.per_task = static_cast<int>(in.getPerTask());
  gpus.per_node = static_cast<int>(in.getPerNode());
  auto raw = static_cast<int>(in.getBind());
  if (raw > static_cast<int>(Bind::map_gpu))
    return make_error(cat("gpus: a binding of kind ", raw, " is unknown to this agent"));
  gpus.bind = static_cast<Bind>(raw);
  if (gpus.bind == Bind::map_gpu)
    for (uint32_t place : in.getMap()) {
      if (place >= kMax) return make_error(cat("gpus: ", place, " in map_gpu is not a GPU number"));
      gpus.map.push_back(static_cast<int>(place));
    }
  if (auto checked = proc::check_gpu_request(gpus); !checked)
    return make_error(cat("gpus: ", checked.error().message));
  return gpus;
}

}  // namespace

void set_job_user(schema::JobUser::Builder out, const JobUser& user) {
  out.setUid(user.uid);
  out.setGid(user.gid);
  out.setName(user.name);
  if (user.groups) {
    auto groups = out.initGroups(static_cast<unsigned>(user.groups->size()));
    for (unsigned i = 0; i < groups.size(); ++i) groups.set(i, (*user.groups)[i]);
  }
}

JobUser job_user_of(schema::JobUser::Reader in) {
  JobUser user{in.getUid(), in.getGid(), std::nullopt, in.getName()};
  if (in.hasGroups()) {
    user.groups.emplace();
    for (uint32_t group : in.getGroups()) user.groups->push_back(group);
  }
  return user;
}

bool set_cxi(schema::CxiCredentials::Builder out, const std::optional<CxiKey>& cxi) {
  if (!cxi) return false;
  out.setVni(cxi->vni);
  out.setSvcId(cxi->svc_id);
  const secure::Secret& key = *cxi->auth_key;
  out.setAuthKey(capnp::Data::Reader(key.data(), key.size()));
  return true;
}

Result<std::optional<CxiKey>> cxi_of(schema::CxiCredentials::Reader in) {
  auto key = in.getAuthKey();
  if (key.size() > kMaxCxiKeyBytes)
    return make_error(
        cat("a CXI auth key of ", key.size(), " bytes (at most ", kMaxCxiKeyBytes, ")"));
  if (key.size() == 0) return std::optional<CxiKey>();
  auto owned = std::make_shared<secure::Secret>(key.size());
  std::memcpy(owned->data(), key.begin(), key.size());
  return std::optional<CxiKey>(CxiKey{in.getVni(), in.getSvcId(), owned});
}

void set_peers(capnp::List<schema::PeerInfo>::Builder out, const std::vector<PeerInfo>& peers) {
  for (unsigned i = 0; i < out.size(); ++i) {
    out[i].setNodeId(peers[i].node_id);
    out[i].setHost(peers[i].host);
    out[i].setPort(peers[i].port);
  }
}

std::vector<PeerInfo> peers_of(capnp::List<schema::PeerInfo>::Reader in) {
  std::vector<PeerInfo> out;
  out.reserve(in.size());
  for (auto peer : in) out.push_back(PeerInfo{peer.getNodeId(), peer.getHost(), peer.getPort()});
  return out;
}

rpc::Outgoing launch_request(const LaunchRequest& r) {
  rpc::Outgoing msg;
  auto req = msg.envelope().initBody().initLaunchProcesses();
  req.setLaunchId(r.launch_id);
  req.setAllocationId(r.allocation_id);
  req.setEntrypoint(r.entrypoint);
  set_texts(req.initArgs(static_cast<unsigned>(r.args.size())), r.args);
  req.setTasksPerNode(r.tasks_per_node);
  req.setFirstRank(r.first_rank);
  req.setWorldSize(r.world_size);
  set_env(req.initEnv(static_cast<unsigned>(r.env.size())), r.env);
  req.setPmiMode(r.pmi == PmiMode::pmix        ? schema::PmiMode::PMIX
                 : r.pmi == PmiMode::none      ? schema::PmiMode::NONE
                 : r.pmi == PmiMode::automatic ? schema::PmiMode::AUTO
                                               : schema::PmiMode::PMI2);
  if (r.cxi) req.initCxiCredentials();
  if (set_cxi(req.getCxiCredentials(), r.cxi)) msg.mark_secret();
  set_peers(req.initPeers(static_cast<unsigned>(r.peers.size())), r.peers);
  req.setHeadNodeIndex(r.head_node_index);
  req.setNodeIndex(r.node_index);
  auto rank_nodes = req.initRankNodes(static_cast<unsigned>(r.rank_nodes.size()));
  for (unsigned i = 0; i < rank_nodes.size(); ++i) rank_nodes.set(i, r.rank_nodes[i]);
  req.setFenceTimeoutMs(r.fence_timeout_ms);
  req.setSlurmCompat(r.slurm_compat);
  req.setWorkdir(r.workdir);
  req.setFanout(r.fanout);
  req.setUsePmiPort(r.use_pmi_port);
  if (r.user) set_job_user(req.initUser(), *r.user);
  req.setTimeLimitMs(r.time_limit_ms);
  req.setKillOnBadExit(r.kill_on_bad_exit);
  auto setup = req.initAppSetup();
  set_env(setup.initEnvironment(static_cast<unsigned>(r.harvested.size())), r.harvested);
  if (!r.vendor.empty()) setup.setVendor(rpc::as_data(r.vendor));
  req.setInputRank(r.input_rank);
  encode_cpu_bind(r.cpu_bind, req.initCpuBind());
  req.setCpusPerTask(r.cpus_per_task);
  encode_gpus(r.gpus, req);
  if (r.spawned_by) {
    auto parent = req.initSpawnedBy();
    parent.setLaunchId(r.spawned_by->launch_id);
    parent.setRank(r.spawned_by->rank);
    parent.setFamily(r.spawned_by->family_id());
  }
  encode_apps(req.initApps(static_cast<unsigned>(r.apps.size())), r.apps);
  if (r.peer_list) {
    auto compact = req.initPeerList();
    compact.setNodeIds(r.peer_list->node_ids);
    compact.setHosts(r.peer_list->hosts);
    auto ports = compact.initPorts(static_cast<unsigned>(r.peer_list->ports.size()));
    for (unsigned i = 0; i < ports.size(); ++i) ports.set(i, r.peer_list->ports[i]);
  }
  if (r.rank_layout) {
    auto rule = req.initRankLayout();
    rule.setCyclic(r.rank_layout->cyclic);
    auto blocks = rule.initBlocks(static_cast<unsigned>(r.rank_layout->blocks.size()));
    for (unsigned i = 0; i < blocks.size(); ++i) {
      blocks[i].setNodes(r.rank_layout->blocks[i].nodes);
      blocks[i].setRanksEach(r.rank_layout->blocks[i].ranks_each);
    }
  }
  req.setRankScheduling(r.scheduling == RankScheduling::batch    ? schema::RankScheduling::BATCH
                        : r.scheduling == RankScheduling::normal ? schema::RankScheduling::NORMAL
                                                                 : schema::RankScheduling::AUTO);
  req.setRelayed(r.relayed);
  req.setLauncherName(r.launcher_name);
  req.setHatchCommand(r.hatch_command);
  req.setUnbuffered(r.unbuffered);
  if (r.warn_signal) {
    auto warn = req.initWarnSignal();
    warn.setSignal(r.warn_signal);
    warn.setBeforeMs(r.warn_before_ms);
  }
  req.setMemoryBytes(r.memory_bytes);
  req.setMemoryPerCpu(r.memory_per_cpu);
  req.setExclusive(r.exclusive);
  if (r.umask) {
    auto inherit = req.initInherit();
    inherit.setUmask(static_cast<uint16_t>(*r.umask & 0777));
    auto limits = inherit.initLimits(static_cast<unsigned>(r.limits.size()));
    for (unsigned i = 0; i < limits.size(); ++i) {
      limits[i].setResource(static_cast<schema::Resource>(r.limits[i].resource));
      limits[i].setSoft(r.limits[i].soft);
    }
  }
  return msg;
}

Result<LaunchRequest> decode_launch_request(schema::LaunchProcessesRequest::Reader in) {
  LaunchRequest r;
  const uint32_t world = in.getWorldSize();
  // Each node and each app holds one rank at least: the world bounds both before they are
  // copied.
  // (A relaying head without ranks of its own is the one exception: launch_spec.)
  if (in.getPeers().size() > static_cast<size_t>(world) + 1)
    return make_error(cat("peers: ", in.getPeers().size(), " nodes for a world of ", world,
                          " ranks (each node holds one at least, but a relaying head)"));
  if (in.getApps().size() > world)
    return make_error(cat(in.getApps().size(), " apps for ", world, " ranks"));
  auto cxi = cxi_of(in.getCxiCredentials());
  if (!cxi) return cxi.error();
  r.cxi = std::move(cxi.value());
  auto bind = decode_cpu_bind(in.getCpuBind());
  if (!bind) return bind.error();
  r.cpu_bind = std::move(bind.value());
  if (in.getCpusPerTask() > static_cast<uint32_t>(proc::kMaxCpus))
    return make_error(cat("cpusPerTask: ", in.getCpusPerTask(), " (at most ", proc::kMaxCpus, ")"));
  r.cpus_per_task = in.getCpusPerTask();
  if (in.hasGpus()) {
    auto gpus = decode_gpus(in.getGpus());
    if (!gpus) return gpus.error();
    r.gpus = std::move(gpus.value());
  }
  if (in.hasSpawnedBy()) {
    auto parent = in.getSpawnedBy();
    if (parent.getLaunchId().size() == 0) return make_error("spawnedBy names no launch");
    r.spawned_by = SpawnParent{parent.getLaunchId(), parent.getRank(), parent.getFamily()};
  }

  r.launch_id = in.getLaunchId();
  r.allocation_id = in.getAllocationId();
  r.entrypoint = in.getEntrypoint();
  r.args = texts_of(in.getArgs());
  r.tasks_per_node = in.getTasksPerNode();
  r.first_rank = in.getFirstRank();
  r.world_size = world;
  r.env = env_of(in.getEnv());
  switch (in.getPmiMode()) {
    case schema::PmiMode::PMI2:
      r.pmi = PmiMode::pmi;
      break;
    case schema::PmiMode::PMIX:
      r.pmi = PmiMode::pmix;
      break;
    case schema::PmiMode::NONE:
      r.pmi = PmiMode::none;
      break;
    case schema::PmiMode::AUTO:
      r.pmi = PmiMode::automatic;
      break;
    default:
      return make_error(
          cat("pmiMode ", static_cast<int>(in.getPmiMode()), " is unknown to this agent"));
  }
  r.peers = peers_of(in.getPeers());
  r.head_node_index = in.getHeadNodeIndex();
  r.node_index = in.getNodeIndex();
  for (uint32_t node : in.getRankNodes()) r.rank_nodes.push_back(node);
  r.fence_timeout_ms = in.getFenceTimeoutMs();
  r.slurm_compat = in.getSlurmCompat();
  r.workdir = in.getWorkdir();
  r.fanout = in.getFanout();
  r.use_pmi_port = in.getUsePmiPort();
  if (in.hasUser()) r.user = job_user_of(in.getUser());
  r.time_limit_ms = in.getTimeLimitMs();
  r.kill_on_bad_exit = in.getKillOnBadExit();
  r.harvested = env_of(in.getAppSetup().getEnvironment());
  r.vendor = rpc::as_string(in.getAppSetup().getVendor());
  r.input_rank = in.getInputRank();
  r.apps = apps_of(in.getApps());
  if (in.hasPeerList()) {
    auto compact = in.getPeerList();
    r.peer_list.emplace(PeerList{compact.getNodeIds(), compact.getHosts(), {}});
    for (uint16_t port : compact.getPorts()) r.peer_list->ports.push_back(port);
  }
  if (in.hasRankLayout()) {
    r.rank_layout.emplace(RankLayout{in.getRankLayout().getCyclic(), {}});
    for (auto block : in.getRankLayout().getBlocks())
      r.rank_layout->blocks.push_back(NodeBlock{block.getNodes(), block.getRanksEach()});
  }
  switch (in.getRankScheduling()) {
    case schema::RankScheduling::NORMAL:
      r.scheduling = RankScheduling::normal;
      break;
    case schema::RankScheduling::BATCH:
      r.scheduling = RankScheduling::batch;
      break;
    default:  // AUTO, and values a newer launcher may add
      r.scheduling = RankScheduling::automatic;
  }
  r.relayed = in.getRelayed();
  r.launcher_name = in.getLauncherName();
  r.hatch_command = in.getHatchCommand();
  r.unbuffered = in.getUnbuffered();
  if (in.hasWarnSignal()) {
    auto warn = in.getWarnSignal();
    if (warn.getSignal() < 0 || warn.getSignal() > 64)
      return make_error(cat("warnSignal: no signal ", warn.getSignal()));
    r.warn_signal = warn.getSignal();
    r.warn_before_ms = warn.getBeforeMs();
  }
  r.memory_bytes = in.getMemoryBytes();
  r.memory_per_cpu = in.getMemoryPerCpu();
  r.exclusive = in.getExclusive();
  if (in.hasInherit()) {
    r.umask = in.getInherit().getUmask() & 0777u;
    for (auto limit : in.getInherit().getLimits()) {
      // A resource a newer launcher knows and this side does not is left alone.
      auto raw = static_cast<int>(limit.getResource());
      if (raw >= 0 && raw < proc::kResourceCount)
        r.limits.push_back(proc::Limit{static_cast<proc::Resource>(raw), limit.getSoft()});
    }
  }
  return r;
}

rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index) {
  rpc::Outgoing msg;
  msg.envelope().initBody().setLaunchProcesses(request);
  msg.envelope().getBody().getLaunchProcesses().setNodeIndex(static_cast<uint32_t>(node_index));
  // The copy holds the launch's CXI key as the original does: wiped with the message.
  if (request.getCxiCredentials().getAuthKey().size()) msg.mark_secret();
  return msg;
}

}  // namespace lattice::wire
