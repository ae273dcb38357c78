// lattice-agentd's core: accepts sealed links (launchers and peer agents), runs launches,
// reports their output and exits back to the link that asked, answers the admin socket, and
// shuts down cleanly (every launch's ranks killed, sockets removed) on SIGTERM/SIGINT. Every
// message is judged against the identity its link proved (authority.hpp) before it acts.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/metrics.hpp"
#include "admin/status.hpp"
#include "agent/allocation.hpp"
#include "agent/authority.hpp"
#include "agent/connection_slots.hpp"
#include "agent/early_messages.hpp"
#include "agent/launch.hpp"
#include "agent/launch_route.hpp"
#include "agent/metrics_endpoint.hpp"
#include "agent/node_links.hpp"
#include "agent/parent_launches.hpp"
#include "agent/pmix_host.hpp"
#include "agent/service_manager.hpp"
#include "agent/signed_relays.hpp"
#include "agent/socket_dir.hpp"
#include "base/log_limiter.hpp"
#include "config/config.hpp"
#include "link/connection.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/orphan_reaper.hpp"
#include "net/signal.hpp"
#include "net/timer.hpp"
#include "secure/cluster_key.hpp"
#include "wire/control.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::agent {

class Agent : private NodeLinks::Host,
              private LaunchRoute::Host,
              private ParentLaunches,
              public admin::AgentControl {
 public:
  // `key` must outlive the agent. `reread` gives the configuration again (the file named
  // `config_source`, "" for none, with the command line's flags over it) for SIGHUP.
  using Reread = std::function<Result<config::AgentConfig>()>;
  Agent(net::Loop& loop, config::AgentConfig config, secure::Credentials& credentials,
        LaunchEnvironment environment, std::string config_source = "", Reread reread = {});
  ~Agent() override;

  // Claims the PMI socket directory, listens (TCP and admin socket) and installs signal
  // handlers. `ready_fd` >= 0 receives "HOST:PORT\n" once listening, then is closed.
  Status start(int ready_fd);
  admin::AgentStatus status() override;
  std::string end_allocation(const std::string& id) override;
  void drain(const std::string& reason) override;
  std::string metrics() override;
  // Why a new launch or allocation is refused here while draining ("" when not).
  std::string refused_by_drain() const;

 private:
  struct LaunchEntry {
    std::unique_ptr<LaunchRoute> route;  // before launch: its sink, outlives it
    std::unique_ptr<Launch> launch;
  };

  void accept(std::unique_ptr<net::Stream> stream);
  // A sealed link on `stream`, this agent's side `side`: its messages, handshake and end come
  // back to on_message, NodeLinks and connection_closed.
  void add_connection(uint64_t id, std::unique_ptr<net::Stream> stream, secure::Channel::Side side);
  void log_identity() const;
  Source source_of(const net::Stream& stream) const;
  // Closes a connection still in its handshake to make room for a new one (ConnectionSlots).
  void drop_handshake(uint64_t conn_id);
  void on_message(uint64_t conn_id, uint64_t request_id, schema::Envelope::Reader envelope);
  void launch_processes(const Sender& sender, uint64_t request_id,
                        schema::LaunchProcessesRequest::Reader request);
  void abort_processes(const Sender& sender, uint64_t request_id,
                       schema::AbortProcesses::Reader abort);
  void signal_processes(const Sender& sender, uint64_t request_id, const wire::Signal& sig);
  void deliver_abort(LaunchEntry& entry, Failure failure, const Sender& sender);
  void fence_message(Result<wire::FenceMessage> decoded, const Sender& sender);
  void hold_early(const std::string& launch_id, EarlyMessage early);
  // A name request, at the launch's head; a direct modex, at the rank's node. Answered on the
  // link they came on.
  void name_request(const Sender& sender, uint64_t request_id, const wire::NameRequest& request);
  void modex_request(const Sender& sender, uint64_t request_id, const wire::ModexRequest& request);
  // A rank's PMIx_Spawn from one of a launch's nodes, at its head: on to the launcher.
  void spawn_request(const Sender& sender, uint64_t request_id, schema::PmixSpawn::Reader message);
  // The head of a launch says it spawned a launch, or a node of it tells the head that a later
  // generation was spawned (PmixFamily).
  void family_notice(const Sender& sender, uint64_t request_id, schema::PmixFamily::Reader message);
  // ParentLaunches
  LaunchNames* names_of(const std::string& launch_id) override;
  LaunchConnects* connects_of(const std::string& launch_id) override;
  void family_grew(const std::string& family_id, wire::SpawnedLaunch child,
                   std::function<void(Result<std::string>)> answer) override;
  void collective_request(const Sender& sender, uint64_t request_id,
                          Result<wire::CollectiveRequest> request);
  // A PMIx event or job control from another node of a launch.
  void pmix_event(const Sender& sender, uint64_t request_id, schema::PmixEvent::Reader reader);
  void pmix_control(const Sender& sender, uint64_t request_id, schema::PmixControl::Reader reader);
  // An escape-hatch message: delivered to its launch when the sender is one of its nodes.
  void exec_message(const std::string& launch_id, const std::string& what, const Sender& sender,
                    const std::function<void(Launch&, int from)>& deliver);
  // An escape-hatch command for a launch that has ended here: its asker hears so at once
  // instead of waiting on a command that never starts.
  void refuse_late_exec(const lattice::wire::ExecCommand& command, const Sender& sender);
  // The sender's entry in the nodes of a launch that ended here lately, or null.
  std::optional<Peer> ended_member(const std::string& launch_id, const Sender& sender) const;
  std::string ended_here(const std::string& launch_id) const;
  void deliver_fence(LaunchEntry& entry, wire::FenceMessage message, const Sender& sender);
  void connection_closed(uint64_t conn_id, const Error& why);
  // Allocations (agent_allocations.cpp).
  void allocation_start(const Sender& sender, uint64_t request_id,
                        schema::AllocationStart::Reader message);
  void allocation_end(const Sender& sender, uint64_t request_id, const wire::AllocationEnd& end);
  void allocation_info(const Sender& sender, uint64_t request_id, const std::string& id);
  void allocation_ending(Allocation& alloc);   // its launches are ended
  void allocation_drained(Allocation& alloc);  // its owner hears; it goes at the next reap
  void reap_allocations();
  Allocation* find_allocation(const std::string& id);
  // `wanted` CPUs this agent may use that no other allocation here holds (0: none asked).
  Result<std::vector<int>> free_cpus(uint32_t wanted) const;
  LaunchAllocation launch_allocation(Allocation& alloc, const LaunchSpec& spec) const;
  // <socket dir>/user.sock: local users' launches in their allocations, without the key.
  Status open_user_door();
  void accept_user(std::unique_ptr<net::Stream> stream);
  void accept_admin(std::unique_ptr<net::Stream> stream);
  // A key holder's `lattice admin status --agents`: what the admin socket would answer.
  void status_request(const Sender& sender, uint64_t request_id,
                      schema::AgentStatus::Reader request);
  // The causes the metrics count refused connections by (agent_metrics.cpp).
  static std::vector<std::string> refusal_causes();
  void sweep();        // rpc deadlines, idle links, stale early fence chunks, heap trimming
  void arm_sweeper();  // while any of those exist
  void shutdown(int signum);
  // SIGHUP: the log file reopened (after a rotation) and the configuration re-read; what can
  // change while launches run takes effect for what comes next, the rest is said to need a
  // restart. Never ends the agent or a launch.
  void reload();
  void reload_revocations();  // security.revoked re-read; revoked peers' links closed
  // A peer agent gone (its link lost, or its certificate revoked): the launches it is in fail.
  // `peer_ended`: it closed the link itself (Failure::peer_ended).
  void node_lost(const std::string& node_id, const std::string& reason, bool peer_ended = false);
  void reap();  // destroys closed connections and ended launches, outside their callbacks
  // A report from below on a relayed launch's link: to its route.
  void pass_up(const Sender& sender, schema::Envelope::Reader envelope);
  // What came down a launcher's link for a launch: on to its children, if it relays.
  void pass_down(const Sender& sender, const std::string& launch_id,
                 schema::Envelope::Reader envelope);
  rpc::Session* session_of(uint64_t conn_id);
  LaunchEntry* find_launch(const std::string& id);

  // NodeLinks::Host
  uint64_t link_made(std::unique_ptr<net::Stream> stream) override;
  link::Connection* connection(uint64_t id) override;
  void drop(uint64_t id, const std::string& reason) override;

  // LaunchRoute::Host
  link::Connection* open_connection(uint64_t id) override;
  void drained(uint64_t id) override;
  void reap_soon() override {
    reaper_.start(0, 0, [this] { reap(); });
  }
  bool stopping() const override { return shutting_down_; }

  net::Loop& loop_;
  rpc::MessageCounts counts_;    // every link's messages, for the admin socket
  link::SealedBytes sealed_;     // and their bytes on the network
  admin::MetricsTally metrics_;  // before launches_: they count into it
  config::AgentConfig config_;
  std::string config_source_;
  Reread reread_;
  secure::Credentials& credentials_;  // its revoked keys follow security.revoked (SIGHUP)
  LaunchEnvironment environment_;
  uint64_t started_ms_;
  std::unique_ptr<SocketDir> socket_dir_;
  std::unique_ptr<proc::Containment> containment_;    // before launches_: outlives their groups
  std::unique_ptr<net::OrphanReaper> orphan_reaper_;  // the subreaper's adopted orphans
  std::unique_ptr<PmixHost> pmix_;                    // before launches_: outlives them
  std::unique_ptr<net::TcpListener> listener_;
  std::unique_ptr<net::UnixListener> admin_listener_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;  // metrics.listen; null: not served
  std::unique_ptr<net::UnixListener> user_door_;
  std::vector<std::unique_ptr<net::SignalWatcher>> signals_;
  std::map<uint64_t, std::unique_ptr<link::Connection>> connections_;
  ConnectionSlots slots_;  // who holds connections_' places (limits.max_connections)
  LogLimiter refusals_;    // connections refused, handshakes failed: one line a second each
  uid_t self_uid_;
  std::map<uint64_t, std::unique_ptr<net::Stream>> admin_clients_;
  std::vector<uint64_t> closed_admin_;  // admin clients to destroy at the next reap
  NodeLinks peers_;                     // before launches_: outlives their holds
  std::map<std::string, std::unique_ptr<Allocation>>
      allocations_;  // before launches_: outlives them
  std::map<std::string, LaunchEntry> launches_;
  SignedRelays signed_relays_;  // relayed requests taken on their launcher's signature
  // The nodes of the launches that ended here lately (newest kEndedLaunchesKept), to answer
  // late escape-hatch commands and name requests.
  std::map<std::string, PeerTable> ended_peers_;
  std::deque<std::string> ended_order_;
  EarlyMessages early_;
  net::Timer reaper_;
  net::Timer sweeper_;
  ServiceManager service_;  // what systemd hears
  uint64_t next_conn_id_ = 1;
  bool shutting_down_ = false;
  std::string draining_;       // an operator's drain reason (lattice admin drain); empty: none
  bool trim_pending_ = false;  // something was freed since the last malloc_trim
  uint64_t last_reap_ms_ = 0;
};

}  // namespace lattice::agent
