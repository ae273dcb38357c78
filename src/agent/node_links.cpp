#include "agent/node_links.hpp"

#include <algorithm>
#include <utility>

#include "base/log.hpp"
#include "net/connect.hpp"

namespace lattice::agent {

rpc::Outgoing close_link_message() {
  rpc::Outgoing message;
  message.envelope().initBody().setCloseLink();
  return message;
}

NodeLinks::NodeLinks(net::Loop& loop, Host& host, Options options, LostFn on_lost)
    : loop_(loop),
      host_(host),
      options_(options),
      on_lost_(std::move(on_lost)),
      tick_timer_(loop) {}

NodeLinks::~NodeLinks() = default;

NodeLinks::Hold::Hold(Hold&& other) noexcept
    : links_(std::exchange(other.links_, nullptr)), node_(std::move(other.node_)) {}

NodeLinks::Hold& NodeLinks::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    if (links_) links_->release(node_);
    links_ = std::exchange(other.links_, nullptr);
    node_ = std::move(other.node_);
  }
  return *this;
}

NodeLinks::Hold::~Hold() {
  if (links_) links_->release(node_);
}

NodeLinks::Link& NodeLinks::link_for(const Peer& peer) {
  auto it = links_.find(peer.node_id);
  if (it != links_.end()) {
    // A link the peer made tells no address: the launch's is kept for a replacement.
    if (it->second->peer.host.empty()) it->second->peer = peer;
    return *it->second;
  }
  auto link = std::make_unique<Link>(options_.heartbeat);
  link->peer = peer;
  link->last_used_ms = loop_.now_ms();
  Link& ref = *link;
  links_[peer.node_id] = std::move(link);
  if (!tick_timer_.active()) {
    uint64_t period = options_.heartbeat.period_ms;
    tick_timer_.start(period, period, [this] { tick(); });
  }
  return ref;
}

void NodeLinks::make(Link& link) {
  link.making = true;
  link.made = true;
  const std::string node = link.peer.node_id;
  LAT_LOG(debug, "link", "connecting to peer ", node, " at ", link.peer.host, ':', link.peer.port);
  net::connect_tcp(loop_, link.peer.host, link.peer.port,
                   [this, node](Result<std::unique_ptr<net::Stream>> stream) {
                     auto it = links_.find(node);
                     if (it == links_.end() || !it->second->making || it->second->conn) return;
                     if (!stream)
                       return lose(node, cat("cannot connect: ", stream.error().message), false);
                     Link& made = *it->second;
                     made.conn = host_.link_made(std::move(stream.value()));
                     node_of_conn_[made.conn] = node;
                     flush(made);  // the connection holds them until the handshake is done
                   });
}

rpc::Session* NodeLinks::session(const Link& link) {
  if (!link.conn) return nullptr;
  link::Connection* conn = host_.connection(link.conn);
  return conn ? &conn->session() : nullptr;
}

void NodeLinks::flush(Link& link) {
  rpc::Session* s = session(link);
  if (!s) return;
  for (auto& frame : std::exchange(link.waiting, {})) s->send_encoded(std::move(frame));
  for (auto& c : std::exchange(link.waiting_calls, {}))
    s->call(std::move(c.message), c.deadline_ms, std::move(c.cb));
}

void NodeLinks::send(const Peer& peer, rpc::Outgoing message) {
  auto frame = rpc::encode_notification(message);
  if (!frame) {
    LAT_LOG(error, "link", "message to ", peer.node_id, " not sent: ", frame.error().message,
            log_fields({{"peer", peer.node_id}}));
    return;
  }
  send_encoded(peer, std::move(frame.value()));
}

void NodeLinks::send_encoded(const Peer& peer, std::string frame) {
  Link& link = link_for(peer);
  link.last_used_ms = loop_.now_ms();
  link.sent_since_closing = link.closing;
  if (rpc::Session* s = session(link)) return s->send_encoded(std::move(frame));
  link.waiting.push_back(std::move(frame));
  if (!link.making) make(link);
}

void NodeLinks::call(const Peer& peer, rpc::Outgoing message, uint64_t timeout_ms,
                     rpc::ResponseCallback cb) {
  Link& link = link_for(peer);
  link.last_used_ms = loop_.now_ms();
  link.sent_since_closing = link.closing;
  uint64_t deadline = loop_.now_ms() + timeout_ms;
  if (rpc::Session* s = session(link))
    return void(s->call(std::move(message), deadline, std::move(cb)));
  link.waiting_calls.push_back(Call{std::move(message), deadline, std::move(cb)});
  if (!link.making) make(link);
}

void NodeLinks::set_reading(const std::string& node_id, bool reading) {
  auto it = links_.find(node_id);
  if (it == links_.end() || it->second->paused == !reading) return;
  Link& link = *it->second;
  link::Connection* conn = link.conn ? host_.connection(link.conn) : nullptr;
  if (!conn) return;
  link.paused = !reading;
  if (reading) {
    conn->resume_reading();
    link.heartbeat = link::Heartbeat(options_.heartbeat);
  } else {
    conn->pause_reading();
  }
}

NodeLinks::Hold NodeLinks::hold(const Peer& peer, bool make_now) {
  Link& link = link_for(peer);
  if (make_now && !link.conn && !link.making) make(link);
  // Beats a link sent while it was last held are forgotten: only this hold's count.
  if (holds_[peer.node_id]++ == 0) link.heartbeat = link::Heartbeat(options_.heartbeat);
  return Hold(this, peer.node_id);
}

void NodeLinks::release(const std::string& node_id) {
  auto it = holds_.find(node_id);
  if (it != holds_.end() && --it->second == 0) holds_.erase(it);
}

void NodeLinks::established(uint64_t conn, const secure::Identity& peer) {
  if (auto mine = node_of_conn_.find(conn); mine != node_of_conn_.end()) {  // made here
    const std::string node = mine->second;
    auto it = links_.find(node);
    if (it == links_.end() || it->second->conn != conn) return;
    Link& link = *it->second;
    link.making = false;
    if (peer.role != secure::Role::agent || peer.name != node)
      lose(node,
           cat("the agent at ", link.peer.host, ':', link.peer.port, " proved to be ",
               secure::describe(peer), ", not agent ", node),
           true);
    return;
  }
  if (peer.role != secure::Role::agent) return;
  node_of_conn_[conn] = peer.name;
  auto it = links_.find(peer.name);
  // A link to that node exists or is being made: this side keeps sending on it (a switch could
  // reorder its messages); the peer's is a spare that serves only what the peer sends.
  if (it != links_.end() && (it->second->conn || it->second->making)) return;
  serve(link_for(Peer{peer.name, "", 0}), conn);
}

void NodeLinks::serve(Link& link, uint64_t conn) {
  link.conn = conn;
  link.made = false;
  link.heartbeat = link::Heartbeat(options_.heartbeat);
  flush(link);
}

void NodeLinks::closed(uint64_t conn, const Error& why) {
  auto it = node_of_conn_.find(conn);
  if (it == node_of_conn_.end()) return;
  std::string node = it->second;
  node_of_conn_.erase(it);
  auto found = links_.find(node);
  if (found == links_.end() || found->second->conn != conn) return;  // a spare
  Link& link = *found->second;
  // A peer that ends a link it made cleanly has nothing in flight on it (an agent that stops
  // ends its launches first, and says so): not a loss. Another link proving that node serves
  // instead, or the next send makes one. Else any member of the cluster proving a node's name
  // could fail that node's launches here by hanging up.
  if (!link.made && why.kind == ErrorKind::closed_by_peer) {
    link.conn = 0;
    for (const auto& [spare, spare_node] : node_of_conn_) {
      link::Connection* c = host_.connection(spare);
      if (spare_node == node && c && c->established()) return serve(link, spare);
    }
    return;  // awaited while held or needed, else forgotten at the next tick
  }
  lose(node, cat("connection closed (", why.message, ")"), false,
       why.kind == ErrorKind::closed_by_peer);
}

bool NodeLinks::may_close(uint64_t conn) {
  auto mine = node_of_conn_.find(conn);
  if (mine == node_of_conn_.end()) return true;
  const std::string node = mine->second;
  auto found = links_.find(node);
  if (found == links_.end() || found->second->conn != conn) {  // a spare: nothing of ours on it
    node_of_conn_.erase(mine);
    return true;
  }
  Link& link = *found->second;
  rpc::Session* s = session(link);
  if (held(node) || !link.waiting.empty() || (s && s->pending() > 0)) return false;
  node_of_conn_.erase(mine);
  links_.erase(node);
  return true;
}

void NodeLinks::lose(const std::string& node_id, const std::string& reason, bool close,
                     bool peer_ended) {
  auto it = links_.find(node_id);
  if (it == links_.end()) return;
  std::unique_ptr<Link> link = std::move(it->second);
  links_.erase(it);
  if (link->conn) {
    node_of_conn_.erase(link->conn);
    if (rpc::Session* s = session(*link)) s->fail_all(cat("connection closed: ", reason));
    if (close && host_.connection(link->conn)) host_.drop(link->conn, reason);
  }
  for (auto& c : std::exchange(link->waiting_calls, {}))
    c.cb(make_error(cat("connection closed: ", reason)));
  // Launches that use the peer say so at warn level; a peer going away is otherwise routine.
  LAT_LOG(info, "link", "peer ", node_id, " lost: ", reason, log_fields({{"peer", node_id}}));
  on_lost_(node_id, reason, peer_ended);
}

void NodeLinks::ask_to_close(Link& link) {
  link.closing = true;
  link.sent_since_closing = false;
  const std::string node = link.peer.node_id;
  const uint64_t conn = link.conn;
  LAT_LOG(debug, "link", "asking ", node, " to close the link: unused for ",
          options_.linger_ms / 1000.0, " s");
  session(link)->call(close_link_message(), loop_.now_ms() + options_.linger_ms,
                      [this, node, conn](Result<schema::Envelope::Reader> reply) {
                        auto it = links_.find(node);
                        if (it == links_.end() || it->second->conn != conn) return;
                        Link& asked = *it->second;
                        asked.closing = false;
                        rpc::Session* s = session(asked);
                        // Used again meanwhile: kept (the peer, having agreed, makes its own should
                        // it send).
                        if (!reply || asked.sent_since_closing || held(node) ||
                            !asked.waiting.empty() || !s || s->pending() > 0)
                          return;
                        node_of_conn_.erase(conn);
                        links_.erase(it);
                        host_.drop(conn, "unused");
                      });
}

void NodeLinks::tick() {
  uint64_t now = loop_.now_ms();
  std::vector<std::string> unused;
  std::vector<std::pair<std::string, std::string>> lost;  // node, why
  for (auto& [node, link] : links_) {
    link::Connection* conn = link->conn ? host_.connection(link->conn) : nullptr;
    if (!conn) {
      // Awaited from a peer that has not made it, and no longer held or needed.
      if (!link->making && !held(node) && link->waiting.empty() && link->waiting_calls.empty())
        unused.push_back(node);
      continue;
    }
    // In the handshake: its own deadline decides. (Calls' deadlines: the agent's sweep.)
    if (!conn->established()) continue;
    if (!held(node)) {
      uint64_t last = std::max(link->last_used_ms, conn->last_activity_ms());
      if (link->made && !link->closing && link->waiting.empty() && conn->session().pending() == 0 &&
          now - last >= options_.linger_ms)
        ask_to_close(*link);
      continue;
    }
    if (link->paused) {
      conn->session().notify(link::heartbeat_message());
      continue;
    }
    if (auto missing = link->heartbeat.tick(conn->session(), now))
      lost.emplace_back(node, *missing);
  }
  for (const auto& node : unused) links_.erase(node);
  for (const auto& [node, why] : lost) lose(node, why, true);
  if (links_.empty()) tick_timer_.stop();
}

}  // namespace lattice::agent
