// The PMIx side of a launch (Open MPI): the namespace registered with the agent's libpmix server
// before any rank starts, libpmix's client events turned into the same policy events PMI-1/2
// ranks raise, and fences carried by the same tree fence. A node's contribution is libpmix's
// opaque blob for its ranks, sent as one hex value under this node's key; the answer is every
// node's blob concatenated, in any order (which is all libpmix asks of its host).
#include <algorithm>

#include "agent/launch.hpp"
#include "agent/launch_rank.hpp"
#include "agent/pmix_blobs.hpp"
#include "agent/pmix_host.hpp"
#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

void Launch::start_pmix() {
  pmix::JobLayout layout;
  layout.nspace = nspace();
  layout.jobid = spec_.launch_id;
  spec_.peers.for_each_id([&](size_t, std::string_view id) { layout.nodes.emplace_back(id); });
  layout.rank_nodes = spec_.rank_nodes;
  if (spec_.apps.size() > 1)
    for (int rank = 0; rank < spec_.world_size; ++rank)
      layout.appnums.push_back(spec_.app_of(rank));
  layout.this_node = spec_.node_index;
  layout.tmpdir = launch_dir_->path();
  // Only its user's processes may connect as its ranks (pmix_door.hpp).
  pmix::RegisteredNamespace job{spec_.user.uid, spec_.user.gid, {}};
  for (auto& rank : ranks_) job.local_ranks.insert(rank->rank);
  env_.pmix->door().allow(nspace(), std::move(job));
  // Spawning waits for libpmix to know the namespace and every local rank; the answer comes
  // on a later loop turn, and the launcher has heard "accepted" by then.
  pmix_->register_job(layout, spec_.user.uid, spec_.user.gid, *this, [this](Status registered) {
    if (!registered) {
      for (auto& rank : ranks_) run(policy_.not_spawned(rank->rank, registered.error().message));
      return;
    }
    spawn_timer_.start(0, 0, [this] { spawn_all(); });
  });
}

void Launch::client_connected(int rank) { rank_initialized(rank); }
void Launch::client_finalized(pmix::RankCall call) {
  rank_finalized(call.rank);
  pmix_->release(call);
}

void Launch::client_aborted(pmix::RankCall call, int status, std::string message) {
  run(policy_.pmi_abort(call.rank, status, std::move(message)));
  pmix_->release(call);  // the client then exits; its status is already decided
}

void Launch::fence_entered(pmix::FenceCall call) {
  uint64_t epoch = ++pmix_epoch_;
  pmi::KvList contribution = pmix_contribution(spec_.node_index, call.data);
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " entered with ",
          call.data.size(), " bytes");
  pmix_fences_.emplace(epoch, std::make_pair(std::move(call), env_.clock->now_ms()));
  fence_phase(epoch, FencePhase::entered);
  fence_->enter(epoch, std::move(contribution));
}

void Launch::pmix_fence_complete(uint64_t epoch, const std::vector<KvView>& merged) {
  auto it = pmix_fences_.find(epoch);
  if (it == pmix_fences_.end()) return;
  auto all = pmix_fence_data(merged);
  if (!all) {
    LAT_LOG(warn, "fence", spec_.launch_id, ": PMIx fence ", epoch, ": ", all.error().message);
    pmix_->answer_fence(it->second.first, false, {});
    pmix_fences_.erase(it);
    return run(policy_.fence_failed_above(epoch, all.error().message));
  }
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " complete: ", all->size(),
          " bytes from ", merged.size(), " nodes to libpmix");
  pmix_->answer_fence(it->second.first, true, std::move(all.value()));
  pmix_fences_.erase(it);
}

void Launch::pmix_fence_failed(uint64_t epoch, const std::string& message) {
  auto it = pmix_fences_.find(epoch);
  if (it == pmix_fences_.end()) return;
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " failed: ", message);
  pmix_->answer_fence(it->second.first, false, {});
  pmix_fences_.erase(it);
}

uint64_t Launch::pmix_fence_started_ms() const {
  return pmix_fences_.empty() ? 0 : pmix_fences_.begin()->second.second;
}

void Launch::modex_requested(pmix::RankCall call) {
  // libpmix asks for a rank it does not hold: the agent of that rank's node fetches it there.
  int owner = call.rank >= 0 && call.rank < spec_.world_size
                  ? spec_.rank_nodes[static_cast<size_t>(call.rank)]
                  : -1;
  if (owner < 0 || owner == spec_.node_index) return pmix_->answer_modex(call, false, {});
  uint64_t id = ++pmix_modex_id_;
  pmix_modex_.emplace(id, call);
  LAT_LOG(debug, "pmix", spec_.launch_id, ": direct modex for rank ", call.rank, " asked of node ",
          owner);
  peers_.call(spec_.peers[static_cast<size_t>(owner)],
              wire::modex_request({spec_.launch_id, call.rank}), spec_.fence_timeout_ms,
              [this, alive = std::weak_ptr<int>(alive_), id](auto reply) {
                if (!alive.expired()) modex_answered(id, wire::decode_modex_answer(reply));
              });
}

void Launch::modex_answered(uint64_t id, Result<std::string> data) {
  auto it = pmix_modex_.find(id);
  if (it == pmix_modex_.end()) return;  // the launch ended meanwhile: answered then
  if (!data)
    LAT_LOG(warn, "pmix", spec_.launch_id, ": direct modex for rank ", it->second.rank, ": ",
            data.error().message);
  pmix_->answer_modex(it->second, data.ok(), data ? std::move(*data) : std::string());
  pmix_modex_.erase(it);
}

void Launch::modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) {
  if (!pmix_)
    return answer(make_error(cat("launch ", spec_.launch_id, " does not use PMIx on ", env_.node_id,
                                 " (asked by node ", from, ")")));
  if (spec_.rank_nodes[static_cast<size_t>(rank)] != spec_.node_index)
    return answer(make_error(cat("rank ", rank, " does not run on ", env_.node_id)));
  pmix_->local_modex(nspace(), rank, std::move(answer));
}

void Launch::unsupported(int rank, std::string operation) {
  std::string line = cat("lattice: ", operation, " is not supported by Lattice's PMIx server\n");
  LAT_LOG(warn, "pmix", spec_.launch_id, ": rank ", rank, ": ", operation, " refused");
  if (rank >= 0) sink_.output(*this, rank, true, std::move(line));
}

}  // namespace lattice::agent
