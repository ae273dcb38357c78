#include "agent/pmix_wire_up.hpp"

#include <algorithm>
#include <iterator>

#include "agent/pmix_blobs.hpp"
#include "agent/pmix_host.hpp"
#include "agent/socket_dir.hpp"
#include "agent/spawn_request.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "wire/modex.hpp"

namespace lattice::agent {

PmixWireUp::PmixWireUp(const LaunchSpec& spec, const Clock& clock, PmixHost* host, NodeLinks& peers,
                       LaunchNames& names, LaunchConnects& connects, WireUpEvents& events)
    : spec_(spec),
      clock_(clock),
      host_(host),
      peers_(peers),
      names_(names),
      connects_(connects),
      events_(events),
      blobs_(spec.node_index) {
  for (int rank : spec.local_ranks())
    ranks_.emplace(rank, pmi::RankStatus{rank, pmi::RankState::waiting, "", 0, 0});
}

// libpmix's own listener is the door: nothing of the launch's directory but its files.
Status PmixWireUp::open(LaunchDir& dir) {
  if (!host_) return make_error("this agent does not serve PMIx");
  auto server = host_->server();
  if (!server) return server.error();
  server_ = *server;
  tmpdir_ = dir.path();
  return {};
}

// Spawning waits for libpmix to have set up what the launcher's setup data asks (RFC0029), then
// to know the namespace and every local rank; the answers come on later loop turns.
void PmixWireUp::prepare(std::function<void(Status)> ready) {
  if (spec_.pmix_setup.empty()) return register_namespace(std::move(ready));
  std::string names;
  for (const auto& entry : spec_.pmix_setup)
    for (const auto& e : entry.envars) names += cat(names.empty() ? "" : ",", e.name);
  LAT_LOG(debug, "pmix", spec_.launch_id, ": PMIx_server_setup_local_support with ",
          spec_.pmix_setup.size(), " entries setting [", names, "]");
  server_->setup_local_support(
      nspace(), spec_.pmix_setup,
      [this, alive = std::weak_ptr<int>(alive_), ready = std::move(ready)](Status s) mutable {
        if (alive.expired()) return;
        if (!s) return ready(std::move(s));
        register_namespace(std::move(ready));
      });
}

void PmixWireUp::register_namespace(std::function<void(Status)> ready) {
  pmix::JobLayout layout;
  layout.nspace = nspace();
  layout.jobid = spec_.launch_id;
  spec_.peers.for_each_id([&](size_t, std::string_view id) { layout.nodes.emplace_back(id); });
  layout.rank_nodes = spec_.rank_nodes;
  if (spec_.apps.size() > 1)
    for (int rank = 0; rank < spec_.world_size; ++rank)
      layout.appnums.push_back(spec_.app_of(rank));
  layout.this_node = spec_.node_index;
  layout.tmpdir = tmpdir_;
  if (spec_.spawned_by) {
    layout.parent_nspace = namespace_of(spec_.spawned_by->launch_id);
    layout.parent_rank = static_cast<int>(spec_.spawned_by->rank);
  }
  // Only its user's processes may connect as its ranks (pmix_door.hpp).
  pmix::RegisteredNamespace job{spec_.user.uid, spec_.user.gid, {}};
  for (const auto& [rank, status] : ranks_) job.local_ranks.insert(rank);
  host_->door().allow(nspace(), std::move(job));
  server_->register_job(layout, spec_.user.uid, spec_.user.gid, *this,
                        [alive = std::weak_ptr<int>(alive_), ready = std::move(ready)](Status s) {
                          if (!alive.expired()) ready(std::move(s));
                        });
}

Status PmixWireUp::rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec&) {
  auto env = server_->client_environment(nspace(), rank);
  if (!env) return env.error();
  in.wireup = proc::RankEnvInput::Wireup::pmix;
  // What the setup data sets (RFC0029), which libpmix 4.2.2's setup_local_support leaves to its
  // host, as PRRTE sets it; libpmix's own variables after it, so that they win.
  in.pmix_env.clear();
  for (const auto& entry : spec_.pmix_setup)
    for (const auto& e : entry.envars) in.pmix_env.push_back(cat(e.name, "=", e.value));
  in.pmix_env.insert(in.pmix_env.end(), std::make_move_iterator(env->begin()),
                     std::make_move_iterator(env->end()));
  in.session_dir = tmpdir_;
  return {};
}

void PmixWireUp::saw(int rank, pmi::RankState state, const char* call) {
  auto it = ranks_.find(rank);
  if (it == ranks_.end()) return;
  it->second.state = state;
  it->second.last_command = call;
  it->second.last_activity_ms = clock_.now_ms();
}

void PmixWireUp::client_connected(int rank) {
  saw(rank, pmi::RankState::initialized, "PMIx_Init");
  events_.rank_initialized(rank);
}

void PmixWireUp::client_finalized(pmix::RankCall call) {
  saw(call.rank, pmi::RankState::finalized, "PMIx_Finalize");
  events_.rank_finalized(call.rank);
  server_->release(call);
}

void PmixWireUp::client_aborted(pmix::RankCall call, int status, std::string message) {
  // Open MPI's MPI_Abort passes "N/A" when it has nothing to say: no message, then.
  if (message == "N/A") message.clear();
  // The launch acts on it (kills the others) once they have heard of it and had time to react.
  announce_end(call.rank, status, [this, call, status, message = std::move(message)]() mutable {
    events_.after_notice([this, call, status, message = std::move(message)]() mutable {
      events_.rank_aborted(call.rank, status, std::move(message));
      if (server_) server_->release(call);  // the client then exits; its status is decided
    });
  });
}

// libpmix calls its host once per fence for all of this node's ranks.
void PmixWireUp::fence_entered(pmix::FenceCall call) {
  uint64_t epoch = ++epoch_;
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " entered with ",
          call.data.size(), " bytes");
  pmi::KvList contribution = blobs_.contribution(std::move(call.data));
  for (auto& [rank, status] : ranks_) {
    if (status.state == pmi::RankState::finalized) continue;
    saw(rank, pmi::RankState::in_fence, "PMIx_Fence");
    status.fences_entered = epoch;
  }
  fences_.emplace(epoch, std::make_pair(std::move(call), clock_.now_ms()));
  events_.fence_entered(epoch, std::move(contribution));
}

void PmixWireUp::fence_complete(uint64_t epoch, KvStore merged) {
  auto it = fences_.find(epoch);
  if (it == fences_.end() || !server_) return;
  auto call = std::move(it->second.first);
  fences_.erase(it);
  for (auto& [rank, status] : ranks_)
    if (status.state == pmi::RankState::in_fence) status.state = pmi::RankState::initialized;
  auto all = blobs_.fence_data(merged.entries);
  if (!all) {
    LAT_LOG(warn, "fence", spec_.launch_id, ": PMIx fence ", epoch, ": ", all.error().message,
            log_fields({{"launch", spec_.launch_id}}));
    server_->answer_fence(call, false, {});
    return events_.fence_unusable(epoch, all.error().message);
  }
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " complete: ", all->size(),
          " bytes from ", merged.entries.size(), " nodes to libpmix");
  server_->answer_fence(call, true, std::move(all.value()));
}

void PmixWireUp::fence_failed(uint64_t epoch, const std::string& message) {
  auto it = fences_.find(epoch);
  if (it == fences_.end() || !server_) return;
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " failed: ", message);
  server_->answer_fence(it->second.first, false, {});
  fences_.erase(it);
}

std::optional<FenceWait> PmixWireUp::fence_waiting() const {
  if (fences_.empty()) return std::nullopt;
  return FenceWait{fences_.rbegin()->first, fences_.begin()->second.second};
}

std::vector<pmi::RankStatus> PmixWireUp::status() const {
  std::vector<pmi::RankStatus> out;
  for (const auto& [rank, status] : ranks_) out.push_back(status);
  return out;
}

bool PmixWireUp::finalize_missing(int rank) const {
  auto it = ranks_.find(rank);
  return it != ranks_.end() && (it->second.state == pmi::RankState::initialized ||
                                it->second.state == pmi::RankState::in_fence);
}

bool PmixWireUp::all_finalized() const {
  return std::all_of(ranks_.begin(), ranks_.end(),
                     [](const auto& r) { return r.second.state == pmi::RankState::finalized; });
}

void PmixWireUp::modex_requested(pmix::RankCall call) {
  // libpmix asks for a rank it does not hold: the agent of that rank's node fetches it there.
  int owner = call.rank >= 0 && call.rank < spec_.world_size
                  ? spec_.rank_nodes[static_cast<size_t>(call.rank)]
                  : -1;
  if (owner < 0 || owner == spec_.node_index) return server_->answer_modex(call, false, {});
  fetch_modex(std::move(call), spec_.launch_id, owner);
}

void PmixWireUp::fetch_modex(pmix::RankCall call, const std::string& launch_id, int node) {
  uint64_t id = ++modex_id_;
  LAT_LOG(debug, "pmix", spec_.launch_id, ": direct modex for rank ", call.rank,
          launch_id == spec_.launch_id ? "" : cat(" of spawned launch ", launch_id),
          " asked of node ", node);
  const int rank = call.rank;
  modex_.emplace(id, std::move(call));
  peers_.call(spec_.peers[static_cast<size_t>(node)], wire::modex_request({launch_id, rank}),
              spec_.fence_timeout_ms, [this, alive = std::weak_ptr<int>(alive_), id](auto reply) {
                if (!alive.expired()) modex_answered(id, wire::decode_modex_answer(reply));
              });
}

void PmixWireUp::modex_answered(uint64_t id, Result<std::string> data) {
  auto it = modex_.find(id);
  if (it == modex_.end() || !server_) return;  // the launch ended meanwhile: answered then
  if (!data)
    LAT_LOG(warn, "pmix", spec_.launch_id, ": direct modex for rank ", it->second.rank, ": ",
            data.error().message,
            log_fields({{"launch", spec_.launch_id}, {"rank", cat(it->second.rank)}}));
  server_->answer_modex(it->second, data.ok(), data ? std::move(*data) : std::string());
  modex_.erase(it);
}

void PmixWireUp::modex_asked(int, int rank, std::function<void(Result<std::string>)> answer) {
  if (spec_.rank_nodes[static_cast<size_t>(rank)] != spec_.node_index)
    return answer(make_error(cat("rank ", rank, " does not run on ",
                                 spec_.peers[static_cast<size_t>(spec_.node_index)].node_id)));
  if (!server_) return answer(make_error(cat("launch ", spec_.launch_id, " has ended here")));
  blobs_.served_outside_fence();
  server_->local_modex(nspace(), rank, std::move(answer));
}

void PmixWireUp::spawn_requested(pmix::SpawnCall call) {
  saw(call.rank, pmi::RankState::initialized, "PMIx_Spawn");
  if (!call.refused.empty()) {
    events_.rank_notice(call.rank, cat("lattice: PMIx_Spawn: ", call.refused, "\n"));
    return server_->answer_spawn(call, make_error(call.refused));
  }
  uint64_t id = ++spawn_id_;
  auto request = spawn_request(spec_.launch_id, call);
  const int rank = call.rank;
  spawns_.emplace(id, std::move(call));
  events_.spawn_requested(std::move(request), [this, alive = std::weak_ptr<int>(alive_), id,
                                               rank](Result<std::string> child) {
    if (alive.expired()) return;
    auto it = spawns_.find(id);
    if (it == spawns_.end() || !server_) return;  // the launch ended meanwhile: answered then
    if (!child)
      events_.rank_notice(rank, cat("lattice: PMIx_Spawn: ", child.error().message, "\n"));
    server_->answer_spawn(it->second, child ? Result<std::string>(namespace_of(*child))
                                            : Result<std::string>(child.error()));
    spawns_.erase(it);
  });
}

void PmixWireUp::child_spawned(const std::string& child_id, const std::vector<int>& layout,
                               bool here, std::function<void(Status)> done) {
  // Ended here: no rank of the parent is left here to reach the children from.
  if (!server_ || here) return done({});
  auto child = std::make_unique<ChildNamespace>(
      spec_, *server_, child_id, layout,
      [this, child_id](pmix::RankCall call, int node) {
        fetch_modex(std::move(call), child_id, node);
      },
      [this](pmix::CollectiveCall call) { collective_entered(std::move(call)); });
  auto job = child->job_layout(tmpdir_);
  ChildNamespace& events = *child;
  children_.emplace(child_id, std::move(child));
  LAT_LOG(debug, "pmix", spec_.launch_id, ": spawned namespace ", job.nspace, " (", layout.size(),
          " ranks) registered here");
  // No client of it connects here: the door lets none in.
  server_->register_job(job, spec_.user.uid, spec_.user.gid, events, std::move(done));
}

void PmixWireUp::close() {
  if (!server_) return;
  for (auto& [id, call] : spawns_) server_->answer_spawn(call, make_error("the launch ended"));
  spawns_.clear();
  for (auto& [epoch, pending] : fences_) server_->answer_fence(pending.first, false, {});
  fences_.clear();
  for (auto& [id, call] : modex_) server_->answer_modex(call, false, {});
  modex_.clear();
  children_.clear();  // their direct modex calls were among modex_
  for (auto& [id, call] : controls_) server_->answer_control(call, pmix::Answer::error);
  controls_.clear();
  close_names();
  host_->door().forget(nspace());
  server_->deregister_job(nspace());
  server_ = nullptr;
}

}  // namespace lattice::agent
