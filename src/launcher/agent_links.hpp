// The launcher's sealed links to a launch's agents, one per node (by node index): made, proved
// (the peer is an agent, and the one named when its node id was given), watched by heartbeats
// while they carry something, paused while the launcher's own output waits, and closed. Which
// links to make and what a lost one means are the job's to say (job.cpp, fan_out.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "launcher/local_agents.hpp"
#include "launcher/report.hpp"
#include "link/connection.hpp"
#include "link/heartbeat.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "secure/credentials.hpp"

namespace lattice::launcher {

// How the launcher reaches its agents: each over TCP, proving the cluster key; or, inside an
// allocation and without the key, only the head, through its agent's user door (a local Unix
// socket), which relays the launch to the others (allocation_door.hpp).
struct AgentReach {
  const secure::Credentials* credentials = nullptr;  // must outlive the links
  std::string door;  // the user door's path, when there are no credentials
};

class AgentLinks {
 public:
  struct Handlers {
    // Whether the launch still wants `node`: a link to a node it gave up on is dropped unused.
    std::function<bool(int node)> wanted;
    // Whether the link to `node` still carries something: only those are watched and paused.
    std::function<bool(int node)> carrying;
    // The agent proved who it is; address(node).node_id is its own.
    std::function<void(int node)> authenticated;
    std::function<void(int node, schema::Envelope::Reader envelope)> message;
    // It cannot be reached, or the peer is not the agent meant (its link is left to the job).
    std::function<void(int node, JobFailure failure)> out;
    // Its link closed, or missed its heartbeats.
    std::function<void(int node, JobFailure failure)> lost;
  };
  AgentLinks(net::Loop& loop, AgentReach reach, std::vector<AgentAddress> agents,
             Handlers handlers);
  ~AgentLinks();
  AgentLinks(const AgentLinks&) = delete;
  AgentLinks& operator=(const AgentLinks&) = delete;

  // Links to these nodes, begun at once with one handshake key pair: making one is half of a
  // handshake's CPU, and a launcher makes a link per node at once (secure/ephemeral_key.hpp).
  // The heartbeats start with the first.
  void link_to(const std::vector<int>& nodes);
  const AgentAddress& address(int node) const { return at(node).address; }
  // The node id its agent gave in its answer.
  bool linked(int node) const { return at(node).conn != nullptr; }
  bool authenticated(int node) const { return at(node).authenticated; }

  // A request to `node`'s agent; `cb` gets its answer or the error (the deadline passed, the
  // link was lost).
  void call(int node, rpc::Outgoing message, uint64_t deadline_ms, rpc::ResponseCallback cb);
  // Dropped when the link to `node` is not open.
  void notify(int node, rpc::Outgoing message);
  // The answer to the agent's request `request_id` on `node`'s link (dropped once it closed).
  void respond(int node, uint64_t request_id, rpc::Outgoing message);
  void respond_error(int node, uint64_t request_id, const std::string& message);
  void close(int node);
  // Every link closes, and the heartbeats stop.
  void close_all();

  // Nothing the agents send is read until resume(): they then hold their ranks back.
  void pause();
  void resume();
  bool paused() const { return paused_; }

  const rpc::MessageCounts& counts() const { return counts_; }  // on every link, for -v

 private:
  // A message from `node`'s agent: answered here if it is a request no owner serves, else
  // handed to the owner.
  void deliver(int node, uint64_t request_id, schema::Envelope::Reader envelope);
  struct Link {
    AgentAddress address;
    link::Heartbeat heartbeat;  // before conn: the session goes first, with its pending beats
    std::unique_ptr<link::Connection> conn;
    bool authenticated = false;  // the agent proved the cluster key; address.node_id is its own
  };
  Link& at(int node) { return links_.at(static_cast<size_t>(node)); }
  const Link& at(int node) const { return links_.at(static_cast<size_t>(node)); }
  void connected(int node, std::unique_ptr<net::Stream> stream,
                 std::shared_ptr<const secure::EphemeralKey> ephemeral);
  // Through the user door: node 0 (the door's own agent) only.
  void link_through_door(const std::vector<int>& nodes);
  void established(int node, const secure::Identity& peer);
  void heartbeat();

  net::Loop& loop_;
  AgentReach reach_;
  Handlers handlers_;
  rpc::MessageCounts counts_;  // before links_: their connections count into it
  std::vector<Link> links_;
  net::Timer heartbeat_timer_;
  net::Timer door_timer_;  // the door's link is made at once, and announced on the next turn
  bool paused_ = false;
};

// How this launcher names itself in handshakes: its certified name when it has an identity
// file, else "lattice@HOST:PID".
std::string launcher_name(const secure::Credentials* credentials);

}  // namespace lattice::launcher
