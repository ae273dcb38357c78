#include "launcher/agent_links.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/strings.hpp"
#include "launcher/local_socket.hpp"
#include "net/connect.hpp"
#include "secure/ephemeral_key.hpp"

namespace lattice::launcher {
namespace {

// Heartbeats to every agent of a running launch (link/heartbeat.hpp).
constexpr link::HeartbeatOptions kHeartbeat{1000, 3};

}  // namespace

std::string launcher_name(const secure::Credentials* credentials) {
  if (credentials && credentials->own()) return credentials->own()->certificate.holder.name;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "localhost");
  std::string name = cat("lattice@", std::string(host).substr(0, 200), ':', ::getpid());
  return secure::valid_identity_name(name) ? name : cat("lattice:", ::getpid());
}

AgentLinks::AgentLinks(net::Loop& loop, AgentReach reach, std::vector<AgentAddress> agents,
                       Handlers handlers)
    : loop_(loop),
      reach_(std::move(reach)),
      handlers_(std::move(handlers)),
      heartbeat_timer_(loop),
      door_timer_(loop) {
  for (auto& address : agents)
    links_.push_back(Link{std::move(address), link::Heartbeat(kHeartbeat), nullptr});
}

AgentLinks::~AgentLinks() = default;

void AgentLinks::link_to(const std::vector<int>& nodes) {
  if (!reach_.credentials) return link_through_door(nodes);
  // Handshake 2: one key pair for the links begun together; the last to begin lets it go
  // (wiped). Handshake 3 makes a pair per link.
  auto pair = std::make_shared<std::shared_ptr<const secure::EphemeralKey>>(
      reach_.credentials->initiate_version == secure::kOldestHandshakeVersion
          ? secure::EphemeralKey::generate()
          : nullptr);
  auto left = std::make_shared<size_t>(nodes.size());
  for (int node : nodes)
    net::connect_tcp(loop_, address(node).host, address(node).port,
                     [this, node, pair, left](Result<std::unique_ptr<net::Stream>> stream) {
                       auto ephemeral = --*left == 0 ? std::move(*pair) : *pair;
                       if (!stream) {
                         const AgentAddress& a = address(node);
                         return handlers_.out(
                             node, JobFailure{cat("cannot reach agent ", a.node_id, " at ", a.host,
                                                  ':', a.port, ": ", stream.error().message)});
                       }
                       connected(node, std::move(stream.value()), std::move(ephemeral));
                     });
  if (!heartbeat_timer_.active())
    heartbeat_timer_.start(kHeartbeat.period_ms, kHeartbeat.period_ms, [this] { heartbeat(); });
}

void AgentLinks::link_through_door(const std::vector<int>& nodes) {
  for (int node : nodes) {
    if (node == 0) continue;
    const AgentAddress& a = address(node);
    handlers_.out(node, JobFailure{cat("cannot reach agent ", a.node_id,
                                       " directly: without the cluster key, a launch reaches its "
                                       "nodes only through ",
                                       address(0).node_id, "'s agent")});
  }
  if (std::find(nodes.begin(), nodes.end(), 0) == nodes.end()) return;
  auto fail = [&](const Error& why) { handlers_.out(0, JobFailure{why.message}); };
  auto fd = connect_local(reach_.door, "the agent's user door", ::getuid());
  if (!fd) return fail(fd.error());
  auto stream = net::Stream::open_fd(loop_, std::move(fd.value()), reach_.door);
  if (!stream) return fail(stream.error());
  rpc::Session::Handlers handlers;
  handlers.on_message = [this](uint64_t request_id, schema::Envelope::Reader envelope) {
    deliver(0, request_id, envelope);
  };
  link::LinkOptions options;
  options.local_peer = secure::Identity{secure::Role::agent, address(0).node_id};
  options.counts = &counts_;
  at(0).conn = std::make_unique<link::Connection>(
      loop_, std::move(stream.value()), std::move(options), std::move(handlers), nullptr,
      [this](const Error& why) {
        handlers_.lost(
            0, JobFailure{cat("node ", address(0).node_id, " lost: its agent's user door closed (",
                              why.message, ")")});
      });
  door_timer_.start(0, 0, [this] { established(0, at(0).conn->identity()); });
  if (!heartbeat_timer_.active())
    heartbeat_timer_.start(kHeartbeat.period_ms, kHeartbeat.period_ms, [this] { heartbeat(); });
}

void AgentLinks::connected(int node, std::unique_ptr<net::Stream> stream,
                           std::shared_ptr<const secure::EphemeralKey> ephemeral) {
  if (!handlers_.wanted(node)) return;  // dropping the stream closes it
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, node](uint64_t request_id, schema::Envelope::Reader envelope) {
    deliver(node, request_id, envelope);
  };
  link::LinkOptions options;
  options.side = secure::Channel::Side::initiator;
  options.credentials = reach_.credentials;
  options.self = secure::Identity{secure::Role::launcher, launcher_name(reach_.credentials)};
  options.ephemeral = std::move(ephemeral);
  options.counts = &counts_;
  at(node).conn = std::make_unique<link::Connection>(
      loop_, std::move(stream), std::move(options), std::move(handlers),
      [this, node](const secure::Identity& peer) { established(node, peer); },
      [this, node](const Error& why) {
        const AgentAddress& a = address(node);
        if (!authenticated(node))
          return handlers_.lost(
              node, JobFailure{cat("cannot authenticate agent ", a.node_id, " at ", a.host, ':',
                                   a.port, ": ", why.message)});
        handlers_.lost(node,
                       JobFailure{cat("node ", a.node_id, " lost: its agent's connection closed (",
                                      why.message, ")")});
      });
}

void AgentLinks::established(int node, const secure::Identity& peer) {
  if (!handlers_.wanted(node)) return;
  Link& link = at(node);
  const AgentAddress& a = link.address;
  if (peer.role != secure::Role::agent)
    return handlers_.out(node, JobFailure{cat(a.host, ':', a.port, " is ", secure::describe(peer),
                                              ", not an agent")});
  if (a.name_known && peer.name != a.node_id)
    return handlers_.out(node, JobFailure{cat("the agent at ", a.host, ':', a.port, " is '",
                                              peer.name, "', not '", a.node_id, "'")});
  link.authenticated = true;
  link.address.node_id = peer.name;  // as the agent proved it, not as we guessed it
  handlers_.authenticated(node);
}

void AgentLinks::call(int node, rpc::Outgoing message, uint64_t deadline_ms,
                      rpc::ResponseCallback cb) {
  at(node).conn->session().call(std::move(message), deadline_ms, std::move(cb));
}

void AgentLinks::notify(int node, rpc::Outgoing message) {
  Link& link = at(node);
  if (link.conn && link.conn->open()) link.conn->session().notify(std::move(message));
}

void AgentLinks::deliver(int node, uint64_t request_id, schema::Envelope::Reader envelope) {
  // A launcher serves a spawn and a heartbeat; any other request (a newer agent's, say) is
  // answered at once so that the agent does not wait out its deadline.
  auto body = envelope.getBody();
  if (request_id != 0 && body.isHeartbeat()) return respond(node, request_id, rpc::Outgoing());
  if (request_id != 0 && !body.isPmixSpawn())
    return respond_error(node, request_id, "method not served by this launcher");
  handlers_.message(node, envelope);
}

void AgentLinks::respond(int node, uint64_t request_id, rpc::Outgoing message) {
  Link& link = at(node);
  if (link.conn && link.conn->open()) link.conn->session().respond(request_id, std::move(message));
}

void AgentLinks::respond_error(int node, uint64_t request_id, const std::string& message) {
  Link& link = at(node);
  if (link.conn && link.conn->open()) link.conn->session().respond_error(request_id, message);
}

void AgentLinks::close(int node) {
  if (Link& link = at(node); link.conn) link.conn->close();
}

void AgentLinks::close_all() {
  heartbeat_timer_.stop();
  for (auto& link : links_)
    if (link.conn) link.conn->close();
}

void AgentLinks::pause() {
  paused_ = true;
  // Only links that carry something are read for it; the others' answers keep coming.
  for (size_t i = 0; i < links_.size(); ++i)
    if (handlers_.carrying(static_cast<int>(i)) && links_[i].conn) links_[i].conn->pause_reading();
}

void AgentLinks::resume() {
  paused_ = false;
  for (auto& link : links_) {
    if (!link.conn) continue;
    link.conn->resume_reading();
    link.heartbeat.reset();  // answers could not be read meanwhile: judge afresh
  }
}

void AgentLinks::heartbeat() {
  uint64_t now = loop_.now_ms();
  for (size_t i = 0; i < links_.size(); ++i) {
    const int node = static_cast<int>(i);
    Link& link = links_[i];
    if (!handlers_.carrying(node) || !link.conn || !link.conn->open()) continue;
    if (paused_) {
      // Their answers wait unread, so nobody is judged; a beat that needs no answer keeps the
      // agents from taking this launcher for gone (their idle timeout).
      link.conn->session().notify(link::heartbeat_message());
      continue;
    }
    link.conn->session().expire(now);
    if (!handlers_.carrying(node)) continue;
    if (auto missing = link.heartbeat.tick(link.conn->session(), now))
      handlers_.lost(node, JobFailure{cat("node ", link.address.node_id, " lost: ", *missing)});
  }
}

}  // namespace lattice::launcher
