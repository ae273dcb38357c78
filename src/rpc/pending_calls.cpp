// PendingCalls: a map by id for responses and an ordered set by deadline for expiry, so both a
// response and an expiry sweep cost O(log n) per call however many fence chunks are in flight.
#include "rpc/pending_calls.hpp"

namespace lattice::rpc {

uint64_t PendingCalls::add(uint64_t deadline_ms, ResponseCallback callback) {
  uint64_t id = next_id_++;
  calls_.emplace(id, Entry{deadline_ms, std::move(callback)});
  by_deadline_.emplace(deadline_ms, id);
  return id;
}

std::optional<ResponseCallback> PendingCalls::take(uint64_t request_id) {
  auto it = calls_.find(request_id);
  if (it == calls_.end()) return std::nullopt;
  ResponseCallback callback = std::move(it->second.callback);
  by_deadline_.erase({it->second.deadline_ms, request_id});
  calls_.erase(it);
  return callback;
}

std::vector<PendingCalls::Call> PendingCalls::take_expired(uint64_t now_ms) {
  std::vector<Call> expired;
  while (!by_deadline_.empty() && by_deadline_.begin()->first <= now_ms) {
    uint64_t id = by_deadline_.begin()->second;
    by_deadline_.erase(by_deadline_.begin());
    auto it = calls_.find(id);
    expired.push_back(Call{id, std::move(it->second.callback)});
    calls_.erase(it);
  }
  return expired;
}

std::vector<PendingCalls::Call> PendingCalls::take_all() {
  std::vector<Call> all;
  all.reserve(calls_.size());
  for (auto& [id, entry] : calls_) all.push_back(Call{id, std::move(entry.callback)});
  calls_.clear();
  by_deadline_.clear();
  return all;
}

}  // namespace lattice::rpc
