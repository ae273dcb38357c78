#include "link/heartbeat.hpp"

#include "base/strings.hpp"

namespace lattice::link {

rpc::Outgoing heartbeat_message() {
  rpc::Outgoing beat;
  beat.envelope().initBody().setHeartbeat();
  return beat;
}

std::optional<std::string> Heartbeat::tick(rpc::Session& session, uint64_t now_ms) {
  if (session.received() != heard_) {
    heard_ = session.received();
    unanswered_ = 0;
  }
  if (unanswered_ >= options_.misses)
    return cat("no heartbeat answer for ", options_.misses * options_.period_ms / 1000.0, " s");
  ++unanswered_;
  session.call(heartbeat_message(), now_ms + options_.period_ms * (options_.misses + 1),
               [this](Result<schema::Envelope::Reader> reply) {
                 if (reply) unanswered_ = 0;
               });
  return std::nullopt;
}

}  // namespace lattice::link
