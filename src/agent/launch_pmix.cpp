// The PMIx side of a launch (Open MPI): the namespace registered with the agent's libpmix server
// before any rank starts, libpmix's client events turned into the same policy events PMI-1/2
// ranks raise, and fences carried by the same tree fence. A node's contribution is libpmix's
// opaque blob for its ranks, sent as one hex value under this node's key; the answer is every
// node's blob concatenated, in any order (which is all libpmix asks of its host).
#include <algorithm>

#include "agent/launch.hpp"
#include "agent/launch_rank.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

void Launch::start_pmix(const std::string& program) {
  pmix::JobLayout layout;
  layout.nspace = nspace();
  layout.jobid = spec_.launch_id;
  for (const auto& peer : spec_.peers) layout.nodes.push_back(peer.node_id);
  layout.rank_nodes = spec_.rank_nodes;
  layout.this_node = spec_.node_index;
  // Spawning waits for libpmix to know the namespace and every local rank; the answer comes
  // on a later loop turn, and the launcher has heard "accepted" by then.
  pmix_->register_job(layout, spec_.user.uid, spec_.user.gid, *this,
                      [this, program](Status registered) {
                        if (!registered) {
                          for (auto& rank : ranks_)
                            run(policy_.not_spawned(rank->rank, registered.error().message));
                          return;
                        }
                        spawn_timer_.start(0, 0, [this, program] { spawn_all(program); });
                      });
}

void Launch::client_connected(int rank) { rank_initialized(rank); }
void Launch::client_finalized(int rank) { rank_finalized(rank); }

void Launch::client_aborted(pmix::RankCall call, int status, std::string message) {
  run(policy_.pmi_abort(call.rank, status, std::move(message)));
  pmix_->answer_abort(call);  // the client then exits; its status is already decided
}

void Launch::fence_entered(pmix::FenceCall call) {
  uint64_t epoch = ++pmix_epoch_;
  pmi::KvList contribution{{cat("pmix.", spec_.node_index), to_hex(call.data)}};
  LAT_LOG(debug, "fence", spec_.launch_id, ": PMIx fence ", epoch, " entered with ",
          call.data.size(), " bytes");
  pmix_fences_.emplace(epoch, std::make_pair(std::move(call), env_.clock->now_ms()));
  fence_->enter(epoch, std::move(contribution));
}

void Launch::pmix_fence_complete(uint64_t epoch, const pmi::KvList& merged) {
  auto it = pmix_fences_.find(epoch);
  if (it == pmix_fences_.end()) return;
  std::string all;
  for (const auto& [key, value] : merged) {
    auto blob = from_hex(value);
    if (!blob) {  // a peer agent sent it; the sealed link vouches for who, not for what
      LAT_LOG(warn, "fence", spec_.launch_id, ": PMIx fence ", epoch, ": bad blob under ", key);
      pmix_->answer_fence(it->second.first, false, {});
      pmix_fences_.erase(it);
      return run(policy_.fence_failed_above(epoch, cat("a malformed PMIx blob under ", key)));
    }
    all += *blob;
  }
  pmix_->answer_fence(it->second.first, true, std::move(all));
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
  // Open MPI collects its data in the fence (the default); fetching one rank's data from its
  // node on demand is not carried between agents yet.
  LAT_LOG(warn, "pmix", spec_.launch_id, ": direct modex for rank ", call.rank,
          " is not supported");
  pmix_->answer_modex(call, false, {});
}

void Launch::unsupported(int rank, std::string operation) {
  std::string line = cat("lattice: ", operation, " is not supported by Lattice's PMIx server\n");
  LAT_LOG(warn, "pmix", spec_.launch_id, ": rank ", rank, ": ", operation, " refused");
  if (rank >= 0) sink_.output(*this, rank, true, std::move(line));
}

}  // namespace lattice::agent
