// Agent-to-agent links: one outgoing sealed rpc connection per peer agent, made on first use and
// reused by every later launch. Messages sent before the link is up wait in order. The peer
// must authenticate as the node the launch names (its handshake identity); a heartbeat call
// every interval, answered by the peer, proves it alive; a closed link (at once), a peer that
// is someone else, or missed heartbeats (within interval x misses) report the peer lost.
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
    rpc::MessageCounts* counts = nullptr;  // must outlive the links
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
  // Makes sure a link exists (and so is watched) without sending anything.
  void watch(const std::string& node_id, const std::string& host, int port);
  size_t size() const { return links_.size(); }

 private:
  struct Link {
    explicit Link(link::HeartbeatOptions options) : heartbeat(options) {}
    link::Heartbeat heartbeat;
    std::string node_id;
    std::string host;
    int port = 0;
    std::unique_ptr<link::Connection> conn;  // null while connecting
    std::vector<std::string> waiting;        // encoded notifications queued until connected
    bool lost = false;
  };

  Link& link_for(const std::string& node_id, const std::string& host, int port);
  void connected(const std::string& key, std::unique_ptr<net::Stream> stream);
  void established(const std::string& key, const secure::Identity& peer);
  void lose(const std::string& key, const std::string& reason);
  void heartbeat();

  net::Loop& loop_;
  Options options_;
  LostFn on_lost_;
  std::map<std::string, std::unique_ptr<Link>> links_;
  net::Timer heartbeat_timer_;
  net::Timer reaper_;
};

}  // namespace lattice::agent
