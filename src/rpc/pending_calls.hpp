// The calls awaiting a response, by request id, with their deadlines. Pure: the owner passes the
// time in, so tests drive deadlines without a clock. Callbacks are handed back, never run here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"

namespace lattice::rpc {

// Gets the response envelope, or an error: the peer's error text, a timeout, or a lost connection.
using ResponseCallback = std::function<void(Result<schema::Envelope::Reader>)>;

class PendingCalls {
 public:
  struct Call {
    uint64_t request_id;
    ResponseCallback callback;
  };

  // Registers a call and returns its request id (never 0: 0 marks notifications).
  uint64_t add(uint64_t deadline_ms, ResponseCallback callback);
  // The callback waiting for `request_id`, removed; nullopt when no such call is pending.
  std::optional<ResponseCallback> take(uint64_t request_id);
  // Removes the calls whose deadline is at or before `now_ms`, earliest deadline first.
  std::vector<Call> take_expired(uint64_t now_ms);
  // Removes every call, in request order.
  std::vector<Call> take_all();
  size_t size() const { return calls_.size(); }

 private:
  struct Entry {
    uint64_t deadline_ms;
    ResponseCallback callback;
  };

  uint64_t next_id_ = 1;
  std::map<uint64_t, Entry> calls_;
  std::set<std::pair<uint64_t, uint64_t>> by_deadline_;  // (deadline_ms, request_id)
};

}  // namespace lattice::rpc
