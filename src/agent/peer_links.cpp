#include "agent/peer_links.hpp"

#include "base/log.hpp"

namespace lattice::agent {

PeerLinks::PeerLinks(net::Loop& loop, uint64_t heartbeat_ms, uint32_t misses, LostFn on_lost)
    : loop_(loop),
      heartbeat_ms_(heartbeat_ms),
      misses_(misses),
      on_lost_(std::move(on_lost)),
      heartbeat_timer_(loop),
      reaper_(loop) {
  heartbeat_timer_.start(heartbeat_ms_, heartbeat_ms_, [this] { heartbeat(); });
}

PeerLinks::~PeerLinks() = default;

PeerLinks::Link& PeerLinks::link_for(const std::string& host, int port) {
  std::string key = cat(host, ':', port);
  auto it = links_.find(key);
  if (it != links_.end() && !it->second->lost) return *it->second;
  auto link = std::make_unique<Link>();
  link->host = host;
  link->port = port;
  Link& ref = *link;
  links_[key] = std::move(link);
  LAT_LOG(debug, "link", "connecting to peer ", key);
  net::connect_tcp(loop_, host, port, [this, key](Result<std::unique_ptr<net::Stream>> stream) {
    if (!stream) return lose(key, cat("cannot connect: ", stream.error().message));
    connected(key, std::move(stream.value()));
  });
  return ref;
}

void PeerLinks::send(const std::string& host, int port, rpc::Outgoing message) {
  Link& link = link_for(host, port);
  if (link.conn)
    link.conn->session().notify(std::move(message));
  else
    link.waiting.push_back(std::move(message));
}

void PeerLinks::watch(const std::string& host, int port) { link_for(host, port); }

void PeerLinks::connected(const std::string& key, std::unique_ptr<net::Stream> stream) {
  auto it = links_.find(key);
  if (it == links_.end() || it->second->lost) return;  // dropping the stream closes it
  Link& link = *it->second;
  rpc::Session::Handlers handlers;
  handlers.on_message = [](uint64_t, schema::Envelope::Reader) {};  // peers answer calls only
  link.conn = std::make_unique<link::Connection>(
      std::move(stream), std::move(handlers),
      [this, key](const std::string& reason) { lose(key, cat("connection closed (", reason, ")")); });
  for (auto& message : link.waiting) link.conn->session().notify(std::move(message));
  link.waiting.clear();
}

void PeerLinks::lose(const std::string& key, const std::string& reason) {
  auto it = links_.find(key);
  if (it == links_.end() || it->second->lost) return;
  it->second->lost = true;
  // Launches that use the peer say so at warn level; a peer going away is otherwise routine.
  LAT_LOG(info, "link", "peer ", key, " lost: ", reason);
  // Destroy the connection outside its own callbacks.
  reaper_.start(0, 0, [this] {
    for (auto i = links_.begin(); i != links_.end();)
      i = i->second->lost ? links_.erase(i) : std::next(i);
  });
  on_lost_(key, reason);
}

void PeerLinks::heartbeat() {
  uint64_t now = loop_.now_ms();
  for (auto& [key, link] : links_) {
    if (!link->conn || link->lost) continue;
    link->conn->session().expire(now);
    if (link->lost) continue;
    if (link->unanswered >= misses_) {
      lose(key, cat("no heartbeat answer for ", misses_ * heartbeat_ms_, " ms"));
      continue;
    }
    ++link->unanswered;
    rpc::Outgoing beat;
    beat.envelope().initBody().setHeartbeat();
    Link* l = link.get();
    link->conn->session().call(std::move(beat), now + heartbeat_ms_ * (misses_ + 1),
                               [l](Result<schema::Envelope::Reader> reply) {
                                 if (reply) l->unanswered = 0;
                               });
  }
}

}  // namespace lattice::agent
