// The agent's TCP connections: who may hold its slots (connection_slots.hpp) and how a link is
// set up once admitted.
#include "agent/agent.hpp"
#include "base/log.hpp"
#include "base/log_limiter.hpp"

namespace lattice::agent {

void Agent::accept(std::unique_ptr<net::Stream> stream) {
  if (shutting_down_) return;  // dropping the stream closes it
  uint64_t id = next_conn_id_++;
  Source source = source_of(*stream);
  auto admission = slots_.admit(id, source);
  if (admission.verdict == ConnectionSlots::Verdict::source_full) {
    metrics_.refused("source_full");
    LAT_LOG_LIMITED(refusals_, warn, "link", "source full", "refusing ", stream->peer(), " (",
                    source.name, "): ", slots_.handshakes_from(source.name),
                    " of its connections are in their handshake "
                    "(limits.max_handshakes_per_source)",
                    log_fields({{"peer", stream->peer()}}));
    return;
  }
  if (admission.verdict == ConnectionSlots::Verdict::table_full) {
    metrics_.refused("table_full");
    LAT_LOG_LIMITED(refusals_, warn, "link", "table full", "refusing ", stream->peer(), ": ",
                    slots_.open(), " authenticated links open (limits.max_connections)",
                    log_fields({{"peer", stream->peer()}}));
    return;
  }
  if (admission.dropped) drop_handshake(admission.dropped);
  LAT_LOG(debug, "link", "connection ", id, " from ", stream->peer(), " (", source.name, ')');
  add_connection(id, std::move(stream), secure::Channel::Side::responder);
}

uint64_t Agent::link_made(std::unique_ptr<net::Stream> stream) {
  uint64_t id = next_conn_id_++;
  LAT_LOG(debug, "link", "connection ", id, " to ", stream->peer());
  add_connection(id, std::move(stream), secure::Channel::Side::initiator);
  return id;
}

void Agent::add_connection(uint64_t id, std::unique_ptr<net::Stream> stream,
                           secure::Channel::Side side) {
  arm_sweeper();
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, id](uint64_t request_id, schema::Envelope::Reader envelope) {
    on_message(id, request_id, envelope);
  };
  link::LinkOptions options;
  options.side = side;
  options.credentials = &credentials_;
  options.self = secure::Identity{secure::Role::agent, config_.node_id};
  options.handshake_timeout_ms = config_.handshake_timeout_ms;
  options.counts = &counts_;
  options.sealed = &sealed_;
  connections_[id] = std::make_unique<link::Connection>(
      loop_, std::move(stream), std::move(options), std::move(handlers),
      [this, id](const secure::Identity& peer) {
        slots_.authenticated(id);
        LAT_LOG(debug, "link", "connection ", id, " is ", secure::describe(peer));
        peers_.established(id, peer);
      },
      [this, id](const Error& why) { connection_closed(id, why); });
}

link::Connection* Agent::connection(uint64_t id) {
  auto it = connections_.find(id);
  return it == connections_.end() || !it->second->open() ? nullptr : it->second.get();
}

void Agent::drop(uint64_t id, const std::string& reason) {
  link::Connection* conn = connection(id);
  if (!conn) return;
  conn->close();  // a final record: the peer sees a clean close
  connection_closed(id, make_error(reason, ErrorKind::closed_here));
}

Source Agent::source_of(const net::Stream& stream) const {
  auto origin = net::peer_origin(stream);
  if (!origin) {
    // Not readable (the client left already): one source for all such, and capped.
    LAT_LOG(debug, "link", origin.error().message);
    return Source{"unknown", true};
  }
  return agent::source_of(*origin, self_uid_);
}

void Agent::drop_handshake(uint64_t conn_id) {
  auto it = connections_.find(conn_id);
  if (it == connections_.end()) return;
  it->second->close();
  metrics_.refused("dropped");
  connection_closed(conn_id,
                    make_error(cat("dropped in its handshake to make room for a newer "
                                   "connection: ",
                                   config_.max_connections, " open (limits.max_connections)")));
}

}  // namespace lattice::agent
