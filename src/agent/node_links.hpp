// Agent-to-agent links: one sealed link per peer agent, used both ways, whichever side made it.
// A link is found by the node its handshake proved (never by address): a link another agent
// made to this one serves this agent's messages to it as well. When none exists, a send makes
// one (to the address the launch gives), and messages wait in order until it is up; the peer
// must prove the node the launch names.
//
// While a live launch holds the link to a node (hold()), a heartbeat call every interval,
// answered by the peer, proves the peer alive; a closed link (at once), a peer that is someone
// else, or missed heartbeats (within interval x misses) report the node lost. A launch may hold
// a node without making a link to it (the fence tree's children make theirs to their parent):
// the hold then watches for the child's link. A link nobody holds is silent; once unused for
// the linger time, the side that made it asks the peer to close it (CloseLink): the peer agrees
// only when nothing of its own is on the link, and forgets it at once, so no message of either
// side is lost in a close. An agent without launches sends nothing and keeps no timer armed.
//
// This class decides which link serves which node; the agent owns the connections themselves
// (NodeLinks::Host) and tells it of their events.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/peer_table.hpp"
#include "link/connection.hpp"
#include "link/heartbeat.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class NodeLinks {
 public:
  // The owner of every connection.
  class Host {
   public:
    virtual ~Host() = default;
    // A sealed link, as initiator, over a stream this side made; its events come back through
    // established() and closed(). Returns its connection id.
    virtual uint64_t link_made(std::unique_ptr<net::Stream> stream) = 0;
    // The connection `id`, or null once it is gone.
    virtual link::Connection* connection(uint64_t id) = 0;
    // Closes the connection (its closed() follows, with `reason`).
    virtual void drop(uint64_t id, const std::string& reason) = 0;
  };
  struct Options {
    link::HeartbeatOptions heartbeat;
    uint64_t linger_ms = 5000;  // an unheld link this side made is closed after this unused
  };
  // A launch's claim on the link to one node (by node, so it outlives a lost link and covers
  // its replacement). Released when destroyed; the NodeLinks must outlive it.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&& other) noexcept;
    ~Hold();

   private:
    friend class NodeLinks;
    Hold(NodeLinks* links, std::string node) : links_(links), node_(std::move(node)) {}
    NodeLinks* links_ = nullptr;
    std::string node_;
  };
  // Called once per lost link to `node_id` (a later send makes a new one). `peer_ended`: the
  // peer closed a link this side made, cleanly: it does so only for a reason it reports itself.
  using LostFn =
      std::function<void(const std::string& node_id, const std::string& reason, bool peer_ended)>;
  NodeLinks(net::Loop& loop, Host& host, Options options, LostFn on_lost);
  ~NodeLinks();

  void send(const Peer& peer, rpc::Outgoing message);
  // The same with a notification already encoded (rpc::encode_notification), so one message
  // for several peers is encoded once.
  void send_encoded(const Peer& peer, std::string frame);
  // A request to the agent `peer`; `cb` gets its response, or the error: the peer's, a timeout
  // after `timeout_ms`, or the link's loss.
  void call(const Peer& peer, rpc::Outgoing message, uint64_t timeout_ms, rpc::ResponseCallback cb);
  // Stops (or resumes) reading what the node sends: backpressure on a child whose reports the
  // parent cannot pass up as fast as they come. Meanwhile the link's heartbeats need no answer
  // (they keep the peer's idle timeout away), and it is judged afresh once reading again.
  void set_reading(const std::string& node_id, bool reading);
  // Keeps the link to `peer` heartbeated while the Hold lives; `make` false: waits for the
  // peer to make it (or a send to need it) instead of making it now.
  [[nodiscard]] Hold hold(const Peer& peer, bool make);

  // The connection's handshake proved `peer` (links this side made and links it accepted).
  void established(uint64_t conn, const secure::Identity& peer);
  void closed(uint64_t conn, const Error& why);
  // The peer that made `conn` asks to close it (CloseLink): true when nothing of this side's
  // is on it; then it serves this side no more (a later send makes a new link).
  bool may_close(uint64_t conn);
  size_t size() const { return links_.size(); }
  size_t held_count() const { return holds_.size(); }  // nodes held by some launch

 private:
  struct Call {
    rpc::Outgoing message;
    uint64_t deadline_ms;
    rpc::ResponseCallback cb;
  };
  struct Link {
    explicit Link(link::HeartbeatOptions options) : heartbeat(options) {}
    link::Heartbeat heartbeat;
    Peer peer;             // where to make it, and the node it must prove
    uint64_t conn = 0;     // 0: none yet (being made, or awaited from the peer)
    bool made = false;     // this side made it (it asks to close it when unused)
    bool making = false;   // connecting or in the handshake
    bool closing = false;  // CloseLink asked, not answered
    bool sent_since_closing = false;
    bool paused = false;  // set_reading(false)
    uint64_t last_used_ms = 0;
    std::vector<std::string> waiting;  // notifications until the link is up
    std::vector<Call> waiting_calls;   // calls until the link is up, in order
  };

  Link& link_for(const Peer& peer);
  void serve(Link& link, uint64_t conn);  // a link the peer made becomes this side's for it
  void make(Link& link);
  rpc::Session* session(const Link& link);
  void flush(Link& link);
  // `close`: this side ends the connection (its own verdict), rather than hearing it closed.
  void lose(const std::string& node_id, const std::string& reason, bool close,
            bool peer_ended = false);
  void release(const std::string& node_id);
  bool held(const std::string& node_id) const { return holds_.count(node_id) != 0; }
  void tick();  // heartbeats for held links; unused ones closed, or forgotten when never made
  void ask_to_close(Link& link);

  net::Loop& loop_;
  Host& host_;
  Options options_;
  LostFn on_lost_;
  std::map<std::string, std::unique_ptr<Link>> links_;  // by node id
  std::map<uint64_t, std::string> node_of_conn_;        // every link to a node, serving or spare
  std::map<std::string, int> holds_;                    // live Holds per node
  net::Timer tick_timer_;                               // armed only while there are links
};

// The CloseLink request.
rpc::Outgoing close_link_message();

}  // namespace lattice::agent
