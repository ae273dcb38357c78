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
  return out;
}

rpc::Outgoing spawn_answer(const std::string& child_launch_id) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmixSpawn().setChildLaunchId(child_launch_id);
  return msg;
}

Result<std::string> decode_spawn_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixSpawn()) return make_error("the answer to a spawn is no PmixSpawn");
  std::string id = body.getPmixSpawn().getChildLaunchId();
  if (id.empty()) return make_error("the answer to a spawn names no launch");
  return id;
}

}  // namespace lattice::wire
