// Agent-to-agent links: one outgoing sealed rpc connection per peer agent, made on first use and
// reused by later launches. Messages sent before the link is up wait in order. The peer must
// authenticate as the node the launch names (its handshake identity). While a live launch holds
// the link (hold()), a heartbeat call every interval, answered by the peer, proves the peer
// alive; a closed link (at once), a peer that is someone else, or missed heartbeats (within
// interval x misses) report the peer lost. A link nobody holds is silent, and once unused for
// the linger time it is closed quietly: an agent without launches sends nothing and keeps no
// timer armed. Only this side ever closes its idle links (the linger is well under the peer's
// idle timeout), so a launch that takes a lingering link again cannot race the peer closing it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "link/connection.hpp"
#include "link/heartbeat.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "secure/cluster_key.hpp"

namespace lattice::agent {

class PeerLinks {
 public:
  struct Options {
    const secure::ClusterKey* key = nullptr;  // must outlive the links
    std::string node_id;                      // this agent's, proved in every handshake
    link::HeartbeatOptions heartbeat;
    uint64_t handshake_timeout_ms = link::kDefaultHandshakeTimeoutMs;
    uint64_t linger_ms = 5000;             // an unheld, unused link is closed after this
    rpc::MessageCounts* counts = nullptr;  // must outlive the links
    // What a peer sends back on a link this side made (a relayed launch's reports from a
    // child), with the identity the link proved; without it such messages are dropped.
    std::function<void(const secure::Identity& peer, schema::Envelope::Reader)> on_message;
  };
  // A launch's claim on the link to one peer (by address, so it outlives a lost link and covers
  // its replacement). Released when destroyed; the PeerLinks must outlive it.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&& other) noexcept;
    ~Hold();

   private:
    friend class PeerLinks;
    Hold(PeerLinks* links, std::string key) : links_(links), key_(std::move(key)) {}
    PeerLinks* links_ = nullptr;
    std::string key_;
  };
  // `peer` is "host:port"; called once per lost link (a later send reconnects).
  using LostFn = std::function<void(const std::string& peer, const std::string& reason)>;
  PeerLinks(net::Loop& loop, Options options, LostFn on_lost);
  ~PeerLinks();

  // To the agent `node_id` at host:port (a link to that address that proves another identity
  // is dropped, and its peer reported lost).
  void send(const std::string& node_id, const std::string& host, int port, rpc::Outgoing message);
  // The same with a notification already encoded (rpc::encode_notification), so one message
  // for several peers is encoded once.
  void send_encoded(const std::string& node_id, const std::string& host, int port,
                    std::string frame);
  // A request to the agent `node_id` (a relayed launch's request to a child); `cb` gets its
  // response, or the error: the peer's, a timeout after `timeout_ms`, or the link's loss.
  void call(const std::string& node_id, const std::string& host, int port, rpc::Outgoing message,
            uint64_t timeout_ms, rpc::ResponseCallback cb);
  // Stops (or resumes) reading what the peer sends on this side's link to it: backpressure on
  // a child whose reports the parent cannot pass up as fast as they come. Meanwhile the link's
  // heartbeats need no answer (they keep the peer's idle timeout away), and it is judged afresh
  // once reading again.
  void set_reading(const std::string& host, int port, bool reading);
  // Makes sure a link exists and keeps it heartbeated while the Hold lives.
  [[nodiscard]] Hold hold(const std::string& node_id, const std::string& host, int port);
  size_t size() const { return links_.size(); }
  size_t held_count() const { return holds_.size(); }  // peers held by some launch

 private:
  struct Link {
    explicit Link(link::HeartbeatOptions options) : heartbeat(options) {}
    link::Heartbeat heartbeat;
    std::string node_id;
    std::string host;
    int port = 0;
    std::unique_ptr<link::Connection> conn;  // null while connecting
    std::vector<std::string> waiting;        // encoded notifications queued until connected
    struct Call {
      rpc::Outgoing message;
      uint64_t deadline_ms;
      rpc::ResponseCallback cb;
    };
    std::vector<Call> waiting_calls;  // calls made before the connection existed, in order
    uint64_t last_used_ms = 0;        // made, or last sent on
    bool lost = false;
    bool paused = false;  // set_reading(false): its answers wait unread, so it is not judged
  };

  Link& link_for(const std::string& node_id, const std::string& host, int port);
  void connected(const std::string& key, std::unique_ptr<net::Stream> stream);
  void established(const std::string& key, const secure::Identity& peer);
  void lose(const std::string& key, const std::string& reason);
  void release(const std::string& key);
  bool held(const std::string& key) const { return holds_.count(key) != 0; }
  void tick();  // heartbeats for held links, quiet closes for unused ones

  net::Loop& loop_;
  Options options_;
  LostFn on_lost_;
  std::map<std::string, std::unique_ptr<Link>> links_;
  std::map<std::string, int> holds_;  // live Holds per peer address
  net::Timer tick_timer_;             // armed only while there are links
  net::Timer reaper_;
};

}  // namespace lattice::agent
