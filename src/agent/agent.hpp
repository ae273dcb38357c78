// lattice-agentd's core: accepts launcher connections, runs launches, reports their output and
// exits back to the connection that asked, answers the admin socket, and shuts down cleanly
// (every launch's ranks killed, sockets removed) on SIGTERM/SIGINT.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "admin/status.hpp"
#include "agent/launch.hpp"
#include "agent/peer_links.hpp"
#include "config/config.hpp"
#include "link/connection.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/signal.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class Agent : private LaunchSink, public admin::AgentControl {
 public:
  Agent(net::Loop& loop, config::AgentConfig config, LaunchEnvironment environment);
  ~Agent() override;

  // Listens (TCP and admin socket) and installs signal handlers. `ready_fd` >= 0 receives
  // "HOST:PORT\n" once listening, then is closed.
  Status start(int ready_fd);
  admin::AgentStatus status() override;

 private:
  struct LaunchEntry {
    std::unique_ptr<Launch> launch;
    uint64_t launcher_conn = 0;  // connection that asked for it; events go there
  };

  void accept(std::unique_ptr<net::Stream> stream);
  void remove_stale_pmi_sockets();
  void on_message(uint64_t conn_id, uint64_t request_id, schema::Envelope::Reader envelope);
  void launch_processes(uint64_t conn_id, uint64_t request_id,
                        schema::LaunchProcessesRequest::Reader request);
  void fence_message(FenceMessage message);
  void connection_closed(uint64_t conn_id, const std::string& reason);
  void accept_admin(std::unique_ptr<net::Stream> stream);
  void shutdown(int signum);
  void reap();  // destroys closed connections and ended launches, outside their callbacks
  void notify(uint64_t conn_id, rpc::Outgoing message);
  Launch* find_launch(const std::string& id);

  // LaunchSink
  void output(Launch& launch, int rank, bool is_stderr, std::string data) override;
  void rank_exited(Launch& launch, int rank, int pid, proc::ExitStatus status) override;
  void ended(Launch& launch, const std::optional<Failure>& failure,
             const std::vector<std::string>& stragglers, const LaunchTimes& times) override;

  net::Loop& loop_;
  config::AgentConfig config_;
  LaunchEnvironment environment_;
  uint64_t started_ms_;
  std::unique_ptr<net::TcpListener> listener_;
  std::unique_ptr<net::UnixListener> admin_listener_;
  std::vector<std::unique_ptr<net::SignalWatcher>> signals_;
  std::map<uint64_t, std::unique_ptr<link::Connection>> connections_;
  std::map<uint64_t, std::unique_ptr<net::Stream>> admin_clients_;
  std::map<std::string, LaunchEntry> launches_;
  PeerLinks peers_;
  // Fence chunks that arrived before this agent's own LaunchProcesses (fan-out is concurrent).
  std::map<std::string, std::vector<FenceMessage>> early_fence_;
  size_t early_fence_count_ = 0;
  net::Timer reaper_;
  net::Timer expiry_;
  uint64_t next_conn_id_ = 1;
  bool shutting_down_ = false;
};

}  // namespace lattice::agent
