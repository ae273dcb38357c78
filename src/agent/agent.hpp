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

#include "admin/status.hpp"
#include "agent/authority.hpp"
#include "agent/connection_slots.hpp"
#include "agent/early_messages.hpp"
#include "agent/launch.hpp"
#include "agent/launch_relay.hpp"
#include "agent/node_links.hpp"
#include "agent/pmix_host.hpp"
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

class Agent : private NodeLinks::Host, public admin::AgentControl {
 public:
  // `key` must outlive the agent. `reread` gives the configuration again (the file named
  // `config_source`, "" for none, with the command line's flags over it) for SIGHUP.
  using Reread = std::function<Result<config::AgentConfig>()>;
  Agent(net::Loop& loop, config::AgentConfig config, const secure::ClusterKey& key,
        LaunchEnvironment environment, std::string config_source = "", Reread reread = {});
  ~Agent() override;

  // Claims the PMI socket directory, listens (TCP and admin socket) and installs signal
  // handlers. `ready_fd` >= 0 receives "HOST:PORT\n" once listening, then is closed.
  Status start(int ready_fd);
  admin::AgentStatus status() override;

 private:
  struct LaunchEntry {
    // What its launch reports to: this entry, so that no report looks the launch up by id.
    class Sink : public LaunchSink {
     public:
      Sink(Agent& agent, LaunchEntry& entry) : agent_(agent), entry_(entry) {}
      void output(Launch&, int rank, bool is_stderr, std::string data) override {
        agent_.output(entry_, rank, is_stderr, std::move(data));
      }
      void rank_exited(Launch&, int rank, int pid, proc::ExitStatus status) override {
        agent_.rank_exited(entry_, rank, pid, status);
      }
      void input_taken(Launch&, uint64_t bytes) override { agent_.input_taken(entry_, bytes); }
      void ended(Launch&, const wire::LaunchEnded& end) override { agent_.ended(entry_, end); }

     private:
      Agent& agent_;
      LaunchEntry& entry_;
    };
    std::unique_ptr<Sink> sink;  // before launch: outlives it
    std::unique_ptr<Launch> launch;
    uint64_t launcher_conn = 0;  // connection that asked for it; events go there
    bool output_paused = false;  // until that connection's queue drains
    // A relayed launch's routing, and its children's links held (heartbeated) meanwhile; the
    // entry outlives the launch until every node below is settled (or kRelayLingerMs).
    std::unique_ptr<LaunchRelay> relay;
    std::vector<NodeLinks::Hold> child_holds;
    uint64_t ended_ms = 0;  // when the launch ended here (0: running)
    // Reports with no way up (the parent and the head lost), encoded, until the launcher
    // reaches this node directly; output beyond kHeldReportBytes is dropped.
    std::vector<std::string> held_reports;
    size_t held_bytes = 0;
  };

  void accept(std::unique_ptr<net::Stream> stream);
  // A sealed link on `stream`, this agent's side `side`: its messages, handshake and end come
  // back to on_message, NodeLinks and connection_closed.
  void add_connection(uint64_t id, std::unique_ptr<net::Stream> stream, secure::Channel::Side side);
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
  void accept_admin(std::unique_ptr<net::Stream> stream);
  void sweep();        // rpc deadlines, idle links, stale early fence chunks, heap trimming
  void arm_sweeper();  // while any of those exist
  void shutdown(int signum);
  // SIGHUP: the log file reopened (after a rotation) and the configuration re-read; what can
  // change while launches run takes effect for what comes next, the rest is said to need a
  // restart. Never ends the agent or a launch.
  void reload();
  void reap();  // destroys closed connections and ended launches, outside their callbacks
  void notify(uint64_t conn_id, rpc::Outgoing message);
  // This node's reports of a launch: to the link it came on, or where its relay says.
  void report(LaunchEntry& entry, rpc::Outgoing message);
  void hold_report(LaunchEntry& entry, rpc::Outgoing message);
  // This node's own exits and end. While its launch is failing, a relayed launch's tree may be
  // what broke (a relay lost, silently or with these in flight, before this node could know):
  // they also go straight to the head, which takes any node's reports about itself.
  void report_own(LaunchEntry& entry, rpc::Outgoing message);
  // The link reports go on is a launcher's, or a parent's, that reads slower than they come:
  // the launch's output, and its children's, wait until it drains.
  void hold_back_output(LaunchEntry& entry);
  void resume_output(LaunchEntry& entry);
  // A relayed launch: stops (or resumes) reading the reports its children send up.
  void set_children_reading(LaunchEntry& entry, bool reading);
  // Its ranks have ended and every report of it and of the nodes below has gone up.
  bool relayed_all(const LaunchEntry& entry) const;
  // For reap(), which lets the entry go when true: relayed_all, or it has waited long enough
  // (then it says what is left behind).
  bool reapable(const LaunchEntry& entry, uint64_t now) const;

  // Relayed launches (agent_relay.cpp, launch_relay.hpp); reports (agent_reports.cpp).
  void relay_request(LaunchEntry& entry, schema::LaunchProcessesRequest::Reader request);
  void child_answered(const std::string& launch_id, int child,
                      const Result<schema::Envelope::Reader>& reply);
  // A report from below: a child's, on this node's link to it, or (at the head) one from a node
  // whose way up was lost. Passed up when the relay allows it.
  void pass_up(const Sender& sender, schema::Envelope::Reader envelope);
  // What came down the link a relayed launch came on (a signal, an abort, stdin), on to the
  // children (for stdin, those with input ranks below). From any other link: nothing.
  void pass_down(const Sender& sender, const std::string& launch_id,
                 schema::Envelope::Reader envelope);
  // `message` to each of the nodes `to` (children of this node), encoded once.
  void send_down(const LaunchEntry& entry, const std::vector<int>& to, rpc::Outgoing message);
  void relay_peer_lost(const std::string& node_id, const std::string& reason);
  // A relayed launch's launcher reached this node directly (its head was lost): the link
  // becomes the launch's, and the reports held meanwhile go on it.
  void adopt(LaunchEntry& entry, const Sender& sender);
  // The link a relayed launch came on (from its parent) closed.
  void relay_origin_lost(LaunchEntry& entry, const std::string& reason);
  rpc::Session* session_of(uint64_t conn_id);
  LaunchEntry* find_launch(const std::string& id);

  // NodeLinks::Host
  uint64_t link_made(std::unique_ptr<net::Stream> stream) override;
  link::Connection* connection(uint64_t id) override;
  void drop(uint64_t id, const std::string& reason) override;

  // What a launch reports (through its entry's Sink).
  void output(LaunchEntry& entry, int rank, bool is_stderr, std::string data);
  void rank_exited(LaunchEntry& entry, int rank, int pid, proc::ExitStatus status);
  void input_taken(LaunchEntry& entry, uint64_t bytes);
  void ended(LaunchEntry& entry, const wire::LaunchEnded& end);

  net::Loop& loop_;
  rpc::MessageCounts counts_;  // every link's messages, for the admin socket
  config::AgentConfig config_;
  std::string config_source_;
  Reread reread_;
  const secure::ClusterKey& key_;
  LaunchEnvironment environment_;
  uint64_t started_ms_;
  std::unique_ptr<SocketDir> socket_dir_;
  std::unique_ptr<proc::Containment> containment_;    // before launches_: outlives their groups
  std::unique_ptr<net::OrphanReaper> orphan_reaper_;  // the subreaper's adopted orphans
  std::unique_ptr<PmixHost> pmix_;                    // before launches_: outlives them
  std::unique_ptr<net::TcpListener> listener_;
  std::unique_ptr<net::UnixListener> admin_listener_;
  std::vector<std::unique_ptr<net::SignalWatcher>> signals_;
  std::map<uint64_t, std::unique_ptr<link::Connection>> connections_;
  ConnectionSlots slots_;  // who holds connections_' places (limits.max_connections)
  LogLimiter refusals_;    // connections refused, handshakes failed: one line a second each
  uid_t self_uid_;
  std::map<uint64_t, std::unique_ptr<net::Stream>> admin_clients_;
  std::vector<uint64_t> closed_admin_;  // admin clients to destroy at the next reap
  NodeLinks peers_;                     // before launches_: outlives their holds
  std::map<std::string, LaunchEntry> launches_;
  // The nodes of the launches that ended here lately (newest kEndedLaunchesKept), to answer
  // late escape-hatch commands and name requests.
  std::map<std::string, PeerTable> ended_peers_;
  std::deque<std::string> ended_order_;
  EarlyMessages early_;
  net::Timer reaper_;
  net::Timer sweeper_;
  uint64_t next_conn_id_ = 1;
  bool shutting_down_ = false;
  bool trim_pending_ = false;  // something was freed since the last malloc_trim
  uint64_t last_reap_ms_ = 0;
};

}  // namespace lattice::agent
