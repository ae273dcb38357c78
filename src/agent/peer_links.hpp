// Agent-to-agent links: one outgoing rpc connection per peer agent, made on first use and
// reused by every later launch. Messages sent before the connection is up wait in order. A
// heartbeat call every interval, answered by the peer, proves the peer is alive; a closed
// connection (at once) or missed heartbeats (within interval x misses) report the peer lost.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "link/connection.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class PeerLinks {
 public:
  // `peer` is "host:port"; called once per lost link (a later send reconnects).
  using LostFn = std::function<void(const std::string& peer, const std::string& reason)>;
  PeerLinks(net::Loop& loop, uint64_t heartbeat_ms, uint32_t misses, LostFn on_lost);
  ~PeerLinks();

  void send(const std::string& host, int port, rpc::Outgoing message);
  // Makes sure a link exists (and so is watched) without sending anything.
  void watch(const std::string& host, int port);
  size_t size() const { return links_.size(); }

 private:
  struct Link {
    std::string host;
    int port = 0;
    std::unique_ptr<link::Connection> conn;  // null while connecting
    std::vector<rpc::Outgoing> waiting;      // queued until connected
    uint32_t unanswered = 0;                 // heartbeats sent and not yet answered
    bool lost = false;
  };

  Link& link_for(const std::string& host, int port);
  void connected(const std::string& key, std::unique_ptr<net::Stream> stream);
  void lose(const std::string& key, const std::string& reason);
  void heartbeat();

  net::Loop& loop_;
  uint64_t heartbeat_ms_;
  uint32_t misses_;
  LostFn on_lost_;
  std::map<std::string, std::unique_ptr<Link>> links_;
  net::Timer heartbeat_timer_;
  net::Timer reaper_;
};

}  // namespace lattice::agent
