// One launch on this node: spawns its local ranks through lattice-rank-exec, serves them PMI
// (PMI_FD socketpairs, the per-launch Unix socket, optionally PMI_PORT), streams their output
// and exit statuses to the launcher, and carries out what the failure policy decides
// (policy/launch_policy.hpp: the first failure anywhere ends the whole launch).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/fence.hpp"
#include "agent/fence_phases.hpp"
#include "agent/launch_hatch.hpp"
#include "agent/launch_spec.hpp"
#include "agent/name_registry.hpp"
#include "agent/node_links.hpp"
#include "agent/stray_sweep.hpp"
#include "agent/tree_fence.hpp"
#include "agent/user_lookup.hpp"
#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/log_limiter.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "pmi/server.hpp"
#include "pmix/server.hpp"
#include "policy/launch_policy.hpp"
#include "proc/containment.hpp"
#include "proc/environment.hpp"
#include "proc/exit_status.hpp"
#include "proc/line_buffer.hpp"
#include "proc/own_user.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {

using policy::Failure;

class Launch;

// Where a launch reports; the agent forwards these to the launcher's connection.
class LaunchSink {
 public:
  virtual ~LaunchSink() = default;
  virtual void output(Launch& launch, int rank, bool is_stderr, std::string data) = 0;
  virtual void rank_exited(Launch& launch, int rank, int pid, proc::ExitStatus status) = 0;
  // Of the stdin this node received, `bytes` in all are now in its input ranks' pipes.
  virtual void input_taken(Launch& launch, uint64_t bytes) = 0;
  // Every local rank is reaped and its output drained; the owner may destroy the launch later
  // (not from inside this call).
  virtual void ended(Launch& launch, const wire::LaunchEnded& end) = 0;
};

class SocketDir;
class LaunchDir;
class PmixHost;

// What every launch on this agent shares. Ranks get nothing of the agent's own environment.
struct LaunchEnvironment {
  const Clock* clock = nullptr;  // must outlive the launches
  std::string node_id;
  std::string rank_exec;                    // path of lattice-rank-exec
  std::string mpi_launcher;                 // path of lattice-mpi-launcher (the escape hatch)
  const SocketDir* socket_dir = nullptr;    // where each launch makes its private directory
  bool agent_is_root = false;               // ranks then switch to the job's user
  const proc::ProcessUser* self = nullptr;  // the agent's user (null: unknown, always switch)
  PmixHost* pmix = nullptr;                 // the agent's PMIx server, for --pmi pmix launches
  // This node's CPU topology for --cpu-bind (read once at start), or why there is none.
  const Result<proc::Topology>* topology = nullptr;
  // What keeps each launch's processes together (a cgroup each, or the agent as subreaper);
  // null: nothing does (unit tests).
  proc::Containment* containment = nullptr;
};

class Launch : private pmi::ServerHooks, private pmix::NamespaceEvents, private LaunchHatch::Host {
 public:
  Launch(net::Loop& loop, LaunchSpec spec, const LaunchEnvironment& env, LaunchSink& sink,
         NodeLinks& peers);
  ~Launch() override;
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // Checks what can be checked before anything runs (program, sockets); on success every local
  // rank is spawned on the next loop turn. An error means nothing was started. A spawn failure
  // is a launch failure, reported like any other.
  Status start();
  void forward_signal(int signum);
  // A fence chunk from a peer agent (multi-node launches only).
  void fence_message(wire::FenceMessage message);
  // A name request from one of the launch's nodes, at its head: the port, or why not.
  Result<std::string> name_asked(const wire::NameRequest& request);
  // A direct modex from node `from` (as its link proved; authority.hpp): `answer` gets the
  // rank's data, or why there is none, later; it may outlive the launch.
  void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer);
  // A piece of the launcher's stdin for this node's input rank(s); `eof` ends it.
  void input(std::string data, bool eof);
  // The launcher reads slower than the ranks write: stop reading their output (their writes
  // then block, as under srun) until it has caught up.
  void pause_output();
  void resume_output();
  // The escape hatch's messages from other nodes go to it.
  LaunchHatch& hatch() { return hatch_; }
  // An abort from the launcher or from one of the launch's nodes (as its link proved).
  void abort_received(policy::AbortSource from, Failure failure);
  // The link to agent `node_id` was lost: fails the launch when that node is one of its nodes.
  void peer_lost(const std::string& node_id, const std::string& reason);
  void launcher_lost(const std::string& reason);
  // The agent is stopping: SIGTERM and a grace, or SIGKILL at once for `kill_now`.
  void shutdown(int signum, bool kill_now);

  const LaunchSpec& spec() const { return spec_; }
  // "RANK:CPUS" for each local rank bound by --cpu-bind (known once start() succeeded).
  std::vector<std::string> bindings() const;
  const std::string& id() const { return spec_.launch_id; }
  const pmi::Server& pmi() const { return pmi_; }
  std::vector<int> fence_children_pending() const { return fence_->children_pending(); }
  const FencePhaseLog& fence_phases() const { return fence_log_; }
  std::vector<std::pair<int, int>> rank_pids() const;  // (rank, pid)
  uint64_t age_ms() const;
  uint64_t elapsed_us() const;  // since the request arrived: the clock of every figure it reports
  bool ended() const override { return policy_.ended(); }
  bool failing() const override { return policy_.failure().has_value(); }  // an abort is under way

 private:
  struct Rank;
  struct PmiConn {
    std::unique_ptr<net::Stream> stream;
    int rank = -1;
  };
  // How a PMI connection reached the launch: it decides who may use it and how it names its
  // rank (pmi::Server::connect / connect_port).
  enum class Door { rank_fd, socket, port };

  // pmi::ServerHooks
  void send(pmi::ConnId conn, std::string bytes) override;
  void fence_ready(uint64_t epoch, pmi::KvList local_puts) override;
  void abort_requested(int rank, std::optional<int> exit_code, std::string message) override;
  void client_failed(pmi::ConnId conn, int rank, std::string message) override;
  bool name_request(pmi::ConnId conn, pmi::NameOp op, const std::string& name,
                    const std::string& port) override;
  void name_answered(uint64_t id, const Result<std::string>& answer);
  void rank_initialized(int rank) override;
  void rank_finalized(int rank) override;
  bool tracing() const override { return log_level() >= LogLevel::trace; }
  void trace(pmi::ConnId conn, char direction, std::string_view message) override;
  uint64_t now_ms() override;
  // On the next loop turn: the answers this turn wrote go out first (writes are held until the
  // callback returns).
  void later(std::function<void()> upkeep) override {
    upkeep_timer_.start(0, 0, std::move(upkeep));  // replaces one still waiting
  }

  // pmix::NamespaceEvents (launch_pmix.cpp): Open MPI's ranks through libpmix.
  void client_connected(int rank) override;
  void client_finalized(pmix::RankCall call) override;
  void client_aborted(pmix::RankCall call, int status, std::string message) override;
  void fence_entered(pmix::FenceCall call) override;
  void modex_requested(pmix::RankCall call) override;
  void unsupported(int rank, std::string operation) override;
  void modex_answered(uint64_t id, Result<std::string> data);
  // Registers the namespace, then spawns (a failed registration fails every rank).
  void start_pmix();
  void pmix_fence_complete(uint64_t epoch, const std::vector<KvView>& merged);
  void pmix_fence_failed(uint64_t epoch, const std::string& message);
  // Since when a PMIx fence has been pending on this node (0: none), for the fence deadline.
  uint64_t pmix_fence_started_ms() const;
  std::string nspace() const { return "lattice." + spec_.launch_id; }

  // LaunchHatch::Host (and ended(), failing())
  Result<std::unique_ptr<net::Process>> start_command(
      const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
      std::function<void(net::ExitInfo)> on_exit) override;
  void commands_done() override;

  void spawn_all();
  Status spawn_rank(Rank& rank);
  // A root agent whose job runs as another user learns that user once (user_lookup.hpp) and
  // then switches in each rank's child; spawning waits for the answer.
  bool needs_user_lookup() const;
  void look_up_user();
  void user_known(Result<proc::ProcessUser> user);
  void give_up_user_lookup();
  void attach_output(Rank& rank, std::unique_ptr<net::Stream> stream, bool is_stderr);
  void feed_input(Rank& rank);  // a freshly spawned input rank gets the stdin held for it
  // Tells the launcher how much stdin the slowest input rank has taken, each MiB.
  void report_input_taken();
  Status open_doors();  // the per-launch directory and socket, and the PMI_PORT listener
  // A connection on the socket or the port, admitted only from the job's user (or root).
  void admit(std::unique_ptr<net::Stream> stream, Door door);
  void serve_pmi(std::unique_ptr<net::Stream> stream, Door door, std::optional<int> rank);
  // How a process of the launch starts: file, argv, environment, cwd, CPUs (below).
  void job_process(net::SpawnSpec& spawn, const std::string& program,
                   const std::vector<std::string>& args, const std::vector<int>& cpus,
                   std::vector<std::string> env) const;
  // lattice-rank-exec's command line for `program` with `args`, bound to `cpus` (if any).
  std::vector<std::string> rank_exec_argv(const std::string& program,
                                          const std::vector<std::string>& args,
                                          const std::vector<int>& cpus = {}) const;
  void on_exit(Rank& rank, net::ExitInfo info);
  // Once no rank or command of the launch runs here: what they left behind is ended.
  void sweep_strays();
  void check_fence_deadline();
  void hold_neighbour_links();
  // Local ranks that never entered fence `epoch`, with their last PMI command and its age.
  std::vector<wire::Straggler> stragglers(uint64_t epoch) const;
  // Carries out the policy's actions, in order.
  void run(std::vector<policy::Action> actions);
  void kill_running(int signum);
  void end(const std::optional<Failure>& failure);
  void send_to_node(int node, rpc::Outgoing message) override;
  void send_to_nodes(const std::vector<int>& nodes, rpc::Outgoing message);
  void send_abort(int node, const Failure& failure);
  Rank* find_rank(int rank);
  std::string where(int rank) const;  // "rank 3 on n1"
  void fence_phase(uint64_t epoch, FencePhase phase);
  // The launch's CXI credentials as rank environments carry them (none without CXI).
  std::optional<proc::RankEnvInput::Cxi> cxi_environment() const;

  net::Loop& loop_;
  // Answers to this launch's calls to other nodes may come after it is gone: they look here.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  LaunchSpec spec_;
  const std::string nodelist_;        // LATTICE_NODELIST, joined once (every rank gets it)
  const std::string slurm_nodelist_;  // SLURM_NODELIST, under slurm_compat
  const LaunchEnvironment& env_;
  LaunchSink& sink_;
  NodeLinks& peers_;
  std::vector<NodeLinks::Hold> link_holds_;  // the tree neighbours', while the launch lives
  uint64_t started_ns_;
  std::map<int, std::string> port_ids_;  // rank -> its one-time PMI_ID (PMI_PORT mode)
  pmi::Server pmi_;
  std::unique_ptr<Fence> fence_;
  TreeFence* tree_fence_ = nullptr;  // fence_ when the launch spans nodes
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<std::string> programs_;  // each app's executable, resolved by start()
  std::map<pmi::ConnId, PmiConn> conns_;
  std::unique_ptr<LaunchDir> launch_dir_;  // <socket dir>/lattice-<random>, removed at the end
  std::unique_ptr<net::UnixListener> socket_listener_;
  std::unique_ptr<net::TcpListener> port_listener_;
  LogLimiter refusals_;  // other users at the socket or the port: one line a second each
  net::Timer watch_timer_;
  net::Timer links_timer_;  // holds the neighbours' links if no rank has started PMI by then
  net::Timer spawn_timer_;
  // The job's user as this node has it, once learned (or why it could not be), and whether
  // spawn_all() is waiting for that.
  std::unique_ptr<UserLookup> user_lookup_;
  std::optional<Result<proc::ProcessUser>> job_user_;
  bool spawn_waiting_ = false;
  bool ranks_batch_ = false;  // ranks start under SCHED_BATCH (LaunchSpec::ranks_batch)
  policy::LaunchPolicy policy_;
  std::map<policy::TimerId, std::unique_ptr<net::Timer>> timers_;  // the policy's, by name
  std::vector<wire::Straggler> stragglers_;  // snapshot taken when a fence timeout ended the launch
  wire::NodeTimes times_;                    // its fences, from fence_log_, at the end
  FencePhaseLog fence_log_;
  int finalized_ = 0;
  // PMIx launches: the server (null otherwise), and this node's fences in flight by epoch.
  pmix::Server* pmix_ = nullptr;
  std::map<uint64_t, std::pair<pmix::FenceCall, uint64_t>> pmix_fences_;  // call, entered at
  uint64_t pmix_epoch_ = 0;
  std::map<uint64_t, pmix::RankCall> pmix_modex_;  // direct modex asked of other nodes
  uint64_t pmix_modex_id_ = 0;
  LaunchHatch hatch_;
  // Name publishing: the names (used at the head), and the requests waiting for an answer.
  NameRegistry names_;
  std::map<uint64_t, pmi::ConnId> name_waiting_;
  std::vector<std::pair<uint64_t, Result<std::string>>> names_ready_;  // answered at the head
  net::Timer name_timer_;
  net::Timer upkeep_timer_;  // the PMI server's upkeep (later()), a turn after its answers
  uint64_t name_id_ = 0;
  // Stdin that came before its rank was spawned, and whether it has ended.
  std::string pending_input_;
  bool input_ended_ = false;
  uint64_t input_received_ = 0, input_reported_ = 0;       // stdin bytes in, and reported taken
  std::optional<std::optional<Failure>> end_after_execs_;  // end() waits for the hatch's commands
  // Every process the launch starts here joins group_; what is left in it when they are done
  // is swept before the launch ends (end() waits for that too).
  std::unique_ptr<proc::ProcessGroup> group_;
  std::unique_ptr<StraySweep> sweep_;
  std::optional<std::optional<Failure>> end_after_sweep_;
};

}  // namespace lattice::agent
