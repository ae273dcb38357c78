#include "agent/peer_links.hpp"

#include <utility>

#include "base/log.hpp"

namespace lattice::agent {

PeerLinks::PeerLinks(net::Loop& loop, Options options, LostFn on_lost)
    : loop_(loop),
      options_(std::move(options)),
      on_lost_(std::move(on_lost)),
      tick_timer_(loop),
      reaper_(loop) {}

PeerLinks::~PeerLinks() = default;

PeerLinks::Hold::Hold(Hold&& other) noexcept
    : links_(std::exchange(other.links_, nullptr)), key_(std::move(other.key_)) {}

PeerLinks::Hold& PeerLinks::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    if (links_) links_->release(key_);
    links_ = std::exchange(other.links_, nullptr);
    key_ = std::move(other.key_);
  }
  return *this;
}

PeerLinks::Hold::~Hold() {
  if (links_) links_->release(key_);
}

PeerLinks::Link& PeerLinks::link_for(const std::string& node_id, const std::string& host,
                                     int port) {
  std::string key = cat(host, ':', port);
  auto it = links_.find(key);
  if (it != links_.end() && !it->second->lost) {
    Link& existing = *it->second;
    if (existing.node_id != node_id)
      LAT_LOG(warn, "link", "peer ", key, " is named '", node_id, "' by one launch and '",
              existing.node_id, "' by another; its handshake decides");
    return existing;
  }
  auto link = std::make_unique<Link>(options_.heartbeat);
  link->node_id = node_id;
  link->host = host;
  link->port = port;
  link->last_used_ms = loop_.now_ms();
  Link& ref = *link;
  links_[key] = std::move(link);
  if (!tick_timer_.active()) {
    uint64_t period = options_.heartbeat.period_ms;
    tick_timer_.start(period, period, [this] { tick(); });
  }
  LAT_LOG(debug, "link", "connecting to peer ", node_id, " at ", key);
  net::connect_tcp(loop_, host, port, [this, key](Result<std::unique_ptr<net::Stream>> stream) {
    if (!stream) return lose(key, cat("cannot connect: ", stream.error().message));
    connected(key, std::move(stream.value()));
  });
  return ref;
}

void PeerLinks::send(const std::string& node_id, const std::string& host, int port,
                     rpc::Outgoing message) {
  auto frame = rpc::encode_notification(message);
  if (!frame) {
    LAT_LOG(error, "link", "message to ", node_id, " not sent: ", frame.error().message);
    return;
  }
  send_encoded(node_id, host, port, std::move(frame.value()));
}

void PeerLinks::send_encoded(const std::string& node_id, const std::string& host, int port,
                             std::string frame) {
  Link& link = link_for(node_id, host, port);
  link.last_used_ms = loop_.now_ms();
  if (link.conn)
    link.conn->session().send_encoded(std::move(frame));
  else
    link.waiting.push_back(std::move(frame));
}

void PeerLinks::call(const std::string& node_id, const std::string& host, int port,
                     rpc::Outgoing message, uint64_t timeout_ms, rpc::ResponseCallback cb) {
  Link& link = link_for(node_id, host, port);
  link.last_used_ms = loop_.now_ms();
  uint64_t deadline = loop_.now_ms() + timeout_ms;
  if (link.conn)
    link.conn->session().call(std::move(message), deadline, std::move(cb));
  else
    link.waiting_calls.push_back(Link::Call{std::move(message), deadline, std::move(cb)});
}

void PeerLinks::set_reading(const std::string& host, int port, bool reading) {
  auto it = links_.find(cat(host, ':', port));
  if (it == links_.end() || !it->second->conn || it->second->paused == !reading) return;
  Link& link = *it->second;
  link.paused = !reading;
  if (reading) {
    link.conn->resume_reading();
    link.heartbeat = link::Heartbeat(options_.heartbeat);
  } else {
    link.conn->pause_reading();
  }
}

PeerLinks::Hold PeerLinks::hold(const std::string& node_id, const std::string& host, int port) {
  Link& link = link_for(node_id, host, port);
  std::string key = cat(host, ':', port);
  // Beats a link sent while it was last held are forgotten: only this hold's count.
  if (holds_[key]++ == 0) link.heartbeat = link::Heartbeat(options_.heartbeat);
  return Hold(this, std::move(key));
}

void PeerLinks::release(const std::string& key) {
  auto it = holds_.find(key);
  if (it != holds_.end() && --it->second == 0) holds_.erase(it);
}

void PeerLinks::connected(const std::string& key, std::unique_ptr<net::Stream> stream) {
  auto it = links_.find(key);
  if (it == links_.end() || it->second->lost) return;  // dropping the stream closes it
  Link& link = *it->second;
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, key](uint64_t, schema::Envelope::Reader envelope) {
    auto found = links_.find(key);
    if (found == links_.end() || found->second->lost || !options_.on_message) return;
    options_.on_message(found->second->conn->identity(), envelope);
  };
  link::LinkOptions options;
  options.side = secure::Channel::Side::initiator;
  options.key = options_.key;
  options.self = secure::Identity{secure::Role::agent, options_.node_id};
  options.handshake_timeout_ms = options_.handshake_timeout_ms;
  options.counts = options_.counts;
  link.conn = std::make_unique<link::Connection>(
      loop_, std::move(stream), std::move(options), std::move(handlers),
      [this, key](const secure::Identity& peer) { established(key, peer); },
      [this, key](const Error& why) { lose(key, cat("connection closed (", why.message, ")")); });
  // The connection holds them until the handshake is done.
  for (auto& frame : link.waiting) link.conn->session().send_encoded(std::move(frame));
  link.waiting.clear();
  for (auto& c : link.waiting_calls)
    link.conn->session().call(std::move(c.message), c.deadline_ms, std::move(c.cb));
  link.waiting_calls.clear();
}

void PeerLinks::established(const std::string& key, const secure::Identity& peer) {
  auto it = links_.find(key);
  if (it == links_.end() || it->second->lost) return;
  const Link& link = *it->second;
  if (peer.role != secure::Role::agent || peer.name != link.node_id)
    lose(key, cat("the agent at ", key, " proved to be ", secure::describe(peer), ", not agent ",
                  link.node_id));
}

void PeerLinks::lose(const std::string& key, const std::string& reason) {
  auto it = links_.find(key);
  if (it == links_.end() || it->second->lost) return;
  it->second->lost = true;
  // Calls in flight, and those that never went out, hear of the loss (a closed session's
  // fail_all does nothing more).
  if (it->second->conn) {
    it->second->conn->session().fail_all(cat("connection closed: ", reason));
    it->second->conn->close();
  }
  for (auto& c : std::exchange(it->second->waiting_calls, {}))
    c.cb(make_error(cat("connection closed: ", reason)));
  // Launches that use the peer say so at warn level; a peer going away is otherwise routine.
  LAT_LOG(info, "link", "peer ", key, " lost: ", reason);
  // Destroy the connection outside its own callbacks.
  reaper_.start(0, 0, [this] {
    for (auto i = links_.begin(); i != links_.end();)
      i = i->second->lost ? links_.erase(i) : std::next(i);
  });
  on_lost_(key, reason);
}

void PeerLinks::tick() {
  uint64_t now = loop_.now_ms();
  std::vector<std::string> unused;
  for (auto& [key, link] : links_) {
    // Still connecting or in the handshake: its own deadlines decide.
    if (!link->conn || link->lost || !link->conn->established()) continue;
    link->conn->session().expire(now);  // a relayed request's deadline, held or not
    if (link->lost) continue;
    if (!held(key)) {
      if (link->waiting.empty() && link->conn->session().pending() == 0 &&
          now - link->last_used_ms >= options_.linger_ms)
        unused.push_back(key);
      continue;
    }
    if (link->paused) {
      link->conn->session().notify(link::heartbeat_message());
      continue;
    }
    if (auto missing = link->heartbeat.tick(link->conn->session(), now)) lose(key, *missing);
  }
  for (const auto& key : unused) {
    LAT_LOG(debug, "link", "closing the link to ", key, ": unused for ",
            options_.linger_ms / 1000.0, " s");
    links_.at(key)->conn->close();  // a final record: the peer sees a clean close
    links_.erase(key);
  }
  if (links_.empty()) tick_timer_.stop();
}

}  // namespace lattice::agent
