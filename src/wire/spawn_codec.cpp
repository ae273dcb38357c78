#include "wire/spawn_codec.hpp"

#include "base/strings.hpp"
#include "wire/texts.hpp"

namespace lattice::wire {

rpc::Outgoing spawn_request(const SpawnRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixSpawn();
  m.setLaunchId(request.launch_id);
  m.setRank(request.rank);
  encode_apps(m.initApps(static_cast<unsigned>(request.apps.size())), request.apps);
  m.setWorkdir(request.workdir);
  set_texts(m.initHosts(static_cast<unsigned>(request.hosts.size())), request.hosts);
  set_texts(m.initHostfiles(static_cast<unsigned>(request.hostfiles.size())), request.hostfiles);
  return msg;
}

Result<SpawnRequest> decode_spawn(schema::PmixSpawn::Reader m) {
  SpawnRequest out;
  out.launch_id = m.getLaunchId();
  out.rank = m.getRank();
  if (m.getApps().size() == 0) return make_error("a spawn of no program");
  if (m.getApps().size() > kMaxSpawnApps)
    return make_error(
        cat("a spawn of ", m.getApps().size(), " programs (at most ", kMaxSpawnApps, ")"));
  if (m.getHosts().size() > kMaxSpawnHosts)
    return make_error(cat("a spawn on ", m.getHosts().size(), " hosts"));
  if (m.getHostfiles().size() > kMaxSpawnApps)
    return make_error(cat("a spawn with ", m.getHostfiles().size(), " hostfiles"));
  for (auto path : m.getHostfiles())
    if (path.size() == 0 || path.size() > kMaxSpawnPath)
      return make_error("a spawn's hostfile path is empty or too long");
  uint64_t procs = 0;
  for (auto app : m.getApps()) {
    if (app.getEntrypoint().size() == 0) return make_error("a spawned app with no program");
    if (app.getSize() == 0) return make_error("a spawned app of no process");
    if (app.getArgs().size() > kMaxSpawnArgs || app.getEnv().size() > kMaxSpawnEnv)
      return make_error("a spawned app with too many arguments or variables");
    procs += app.getSize();
  }
  if (procs > kMaxSpawnProcs)
    return make_error(cat("a spawn of ", procs, " processes (at most ", kMaxSpawnProcs, ")"));
  out.apps = apps_of(m.getApps());
  out.workdir = m.getWorkdir();
  out.hosts = texts_of(m.getHosts());
  out.hostfiles = texts_of(m.getHostfiles());
  return out;
}

namespace {

template <typename List>
Result<std::vector<uint32_t>> rank_nodes_of(List list) {
  if (list.size() > kMaxSpawnProcs)
    return make_error(
        cat("a spawned launch of ", list.size(), " ranks (at most ", kMaxSpawnProcs, ")"));
  std::vector<uint32_t> out;
  out.reserve(list.size());
  for (uint32_t node : list) out.push_back(node);
  return out;
}

}  // namespace

rpc::Outgoing spawn_answer(const SpawnedLaunch& child) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixSpawn();
  m.setChildLaunchId(child.launch_id);
  auto nodes = m.initChildRankNodes(static_cast<unsigned>(child.rank_nodes.size()));
  for (unsigned i = 0; i < nodes.size(); ++i) nodes.set(i, child.rank_nodes[i]);
  return msg;
}

Result<SpawnedLaunch> decode_spawn_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixSpawn()) return make_error("the answer to a spawn is no PmixSpawn");
  SpawnedLaunch out;
  out.launch_id = body.getPmixSpawn().getChildLaunchId();
  if (out.launch_id.empty()) return make_error("the answer to a spawn names no launch");
  auto nodes = rank_nodes_of(body.getPmixSpawn().getChildRankNodes());
  if (!nodes) return nodes.error();
  out.rank_nodes = std::move(nodes.value());
  return out;
}

rpc::Outgoing family_notice(const FamilyNotice& notice) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixFamily();
  m.setLaunchId(notice.launch_id);
  m.setChildLaunchId(notice.child.launch_id);
  auto nodes = m.initRankNodes(static_cast<unsigned>(notice.child.rank_nodes.size()));
  for (unsigned i = 0; i < nodes.size(); ++i) nodes.set(i, notice.child.rank_nodes[i]);
  return msg;
}

Result<FamilyNotice> decode_family_notice(schema::PmixFamily::Reader m) {
  FamilyNotice out;
  out.launch_id = m.getLaunchId();
  out.child.launch_id = m.getChildLaunchId();
  if (out.child.launch_id.empty()) return make_error("a PmixFamily naming no spawned launch");
  auto nodes = rank_nodes_of(m.getRankNodes());
  if (!nodes) return nodes.error();
  if (nodes->empty()) return make_error("a PmixFamily of no rank");
  out.child.rank_nodes = std::move(nodes.value());
  return out;
}

}  // namespace lattice::wire
