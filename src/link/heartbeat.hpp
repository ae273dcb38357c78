// Liveness of one link, the same for the launcher's links to agents and for links between
// agents: a Heartbeat request every period; a peer that leaves `misses` of them unanswered in a
// row, and sends nothing else meanwhile, is lost (a hung host keeps its TCP connection open, so
// EOF alone would never tell). Any message counts as proof of life: a busy peer's answers wait
// behind the data it is sending us (a fence root's merged store, an agent's output).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "rpc/session.hpp"

namespace lattice::link {

struct HeartbeatOptions {
  uint64_t period_ms = 1000;
  uint32_t misses = 3;
};

class Heartbeat {
 public:
  explicit Heartbeat(HeartbeatOptions options) : options_(options) {}

  // Once per period, after the session's overdue calls were expired: the reason the peer is
  // lost, or nothing (and the next beat is sent). The session must outlive this object or
  // drop its pending calls uncalled when it goes, as rpc::Session does.
  std::optional<std::string> tick(rpc::Session& session, uint64_t now_ms);
  // Forget the beats sent so far (their answers could not be read: the owner stopped reading).
  void reset() { unanswered_ = 0; }

 private:
  HeartbeatOptions options_;
  uint32_t unanswered_ = 0;  // beats sent and not yet answered, nor anything else heard since
  uint64_t heard_ = 0;       // the session's received() when last looked at
};

// A Heartbeat: a call that tick() sends, or as a notification, proof of life towards a peer
// whose answers are not being read (the peer's idle timeout counts any traffic).
rpc::Outgoing heartbeat_message();

}  // namespace lattice::link
