// Fences of the PMI server: PMI-1 barrier_in, PMI-2 kvs-fence and PMI-2 ring all enter the
// same per-rank epoch counter. When every local rank entered epoch E, fence_ready(E) hands the
// local puts out; fence_complete(E) publishes the merged store and answers the parked ranks.
#include <algorithm>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "pmi/server.hpp"

namespace lattice::pmi {

void Server::enter_fence(Conn& conn, const Command& request, FenceKind kind,
                         const RingValues* ring_input) {
  Slot* slot = slot_of(conn);
  if (!slot) return;  // initialized connections always have a slot
  if (slot->parked) {
    reply(conn, request,
          error_response(request, cat(who(conn), " is already in fence ", slot->fences_entered)));
    return;
  }
  uint64_t epoch = ++slot->fences_entered;
  if (epoch <= failed_epoch_) {
    reply(conn, request,
          error_response(request, cat("fence ", epoch, " failed: ", failure_message_)));
    return;
  }
  if (ring_input) kvs_.put_reserved(ring_key(slot->rank), encode_ring_input(*ring_input));
  if (slot->state == RankState::initialized) slot->state = RankState::in_fence;
  slot->parked = Parked{conn.id, request, kind};
  announce_if_ready();
}

void Server::announce_if_ready() {
  uint64_t next = announced_epoch_ + 1;
  if (slots_.empty() || next <= failed_epoch_) return;
  for (const Slot& s : slots_)
    if (s.fences_entered < next) return;
  announced_epoch_ = next;
  // Last: the hook may complete the fence before returning.
  hooks_.fence_ready(next, kvs_.take_pending());
}

void Server::fence_complete(uint64_t epoch, KvStore merged) {
  try {
    if (epoch != completed_epoch_ + 1 || epoch > announced_epoch_ || epoch <= failed_epoch_) {
      LAT_LOG(warn, "pmi", info_.jobid, ": ignoring completion of fence ", epoch, " (announced ",
              announced_epoch_, ", completed ", completed_epoch_, ", failed ", failed_epoch_, ")",
              log_fields({{"launch", info_.jobid}}));
      return;
    }
    completed_epoch_ = epoch;
    std::map<int, RingValues> ring;
    if (std::any_of(slots_.begin(), slots_.end(),
                    [](const Slot& s) { return s.parked && s.parked->kind == FenceKind::ring; }))
      ring = ring_outputs(ring_inputs(merged.entries));
    kvs_.publish(std::move(merged));
    for (Slot& slot : slots_)
      if (slot.parked && slot.fences_entered == epoch) answer_parked(slot, ring);
    // The store's merging waits for the answers: a node releases its ranks first.
    hooks_.later([this] { kvs_.compact(); });
  } catch (const std::exception& e) {
    LAT_LOG(error, "pmi", info_.jobid, ": completing fence ", epoch, ": ", e.what(),
            log_fields({{"launch", info_.jobid}}));
  } catch (...) {
    LAT_LOG(error, "pmi", info_.jobid, ": completing fence ", epoch, ": unknown exception",
            log_fields({{"launch", info_.jobid}}));
  }
}

void Server::answer_parked(Slot& slot, const std::map<int, RingValues>& ring) {
  Parked parked = std::move(*slot.parked);
  slot.parked.reset();
  if (slot.state == RankState::in_fence) slot.state = RankState::initialized;
  Conn* conn = find_conn(parked.conn);
  if (!conn) return;
  const Command& request = parked.request;
  switch (parked.kind) {
    case FenceKind::barrier:
      return reply(*conn, request, Response{"barrier_out", {}});
    case FenceKind::kvs_fence:
      return reply(*conn, request, Response{"kvs-fence-response", {{"rc", "0"}}});
    case FenceKind::ring: {
      auto out = ring.find(slot.rank);
      if (out == ring.end())
        return reply(*conn, request,
                     error_response(request, cat("ring input of rank ", slot.rank,
                                                 " is missing from fence ", slot.fences_entered)));
      const RingValues& v = out->second;
      return reply(*conn, request,
                   Response{"ring-response",
                            {{"rc", "0"},
                             {"ring-count", cat(v.count)},
                             {"ring-left", v.left},
                             {"ring-right", v.right}}});
    }
  }
}

void Server::fence_failed(uint64_t epoch, const std::string& message) {
  try {
    if (epoch > failed_epoch_) {
      failed_epoch_ = epoch;
      failure_message_ = message;
    }
    for (Slot& slot : slots_) {
      if (!slot.parked || slot.fences_entered > epoch) continue;
      Parked parked = std::move(*slot.parked);
      slot.parked.reset();
      if (slot.state == RankState::in_fence) slot.state = RankState::initialized;
      if (Conn* conn = find_conn(parked.conn))
        reply(*conn, parked.request,
              error_response(parked.request,
                             cat("fence ", slot.fences_entered, " failed: ", message)));
    }
  } catch (const std::exception& e) {
    LAT_LOG(error, "pmi", info_.jobid, ": failing fence ", epoch, ": ", e.what(),
            log_fields({{"launch", info_.jobid}}));
  } catch (...) {
    LAT_LOG(error, "pmi", info_.jobid, ": failing fence ", epoch, ": unknown exception",
            log_fields({{"launch", info_.jobid}}));
  }
}

std::vector<int> Server::ranks_not_in_fence() const {
  uint64_t pending = 0;
  for (const Slot& s : slots_)
    if (s.parked) pending = std::max(pending, s.fences_entered);
  std::vector<int> out;
  if (pending <= announced_epoch_) return out;  // nothing parked beyond an announced fence
  for (const Slot& s : slots_)
    if (s.fences_entered < pending) out.push_back(s.rank);
  return out;
}

}  // namespace lattice::pmi
