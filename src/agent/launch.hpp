// One launch on this node: spawns its local ranks, wires them up through its backend
// (wire_up.hpp: PMI-1/PMI-2 or PMIx) and its fence (launch_fence.hpp), streams their output
// and exit statuses to the launcher, and carries out what the failure policy decides
// (policy/launch_policy.hpp: the first failure anywhere ends the whole launch).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/metrics.hpp"
#include "agent/fence_phases.hpp"
#include "agent/launch_connects.hpp"
#include "agent/launch_family.hpp"
#include "agent/launch_fence.hpp"
#include "agent/launch_hatch.hpp"
#include "agent/launch_names.hpp"
#include "agent/launch_spec.hpp"
#include "agent/node_links.hpp"
#include "agent/rank_set.hpp"
#include "agent/stray_sweep.hpp"
#include "agent/user_lookup.hpp"
#include "agent/wire_up.hpp"
#include "base/clock.hpp"
#include "base/log.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "policy/launch_policy.hpp"
#include "proc/containment.hpp"
#include "proc/environment.hpp"
#include "proc/exit_status.hpp"
#include "proc/own_user.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"
#include "wire/reports.hpp"
#include "wire/spawn_codec.hpp"

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
  // A request to the launcher the launch came from (a spawn, from its head); `answer` gets its
  // response, or why there is none, and may run after the launch is gone.
  virtual void ask_launcher(Launch& launch, rpc::Outgoing request, uint64_t timeout_ms,
                            rpc::ResponseCallback answer) = 0;
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
  std::string rank_exec;     // path of lattice-rank-exec
  std::string mpi_launcher;  // path of lattice-mpi-launcher (the escape hatch)
  std::string srun_front;    // path of lattice-srun: a --slurm-compat batch step's srun
  const SocketDir* socket_dir = nullptr;    // where each launch makes its private directory
  bool agent_is_root = false;               // ranks then switch to the job's user
  const proc::ProcessUser* self = nullptr;  // the agent's user (null: unknown, always switch)
  PmixHost* pmix = nullptr;                 // the agent's PMIx server, for --pmi pmix launches
  // This node's CPU topology for --cpu-bind (read once at start), or why there is none.
  const Result<proc::Topology>* topology = nullptr;
  // This node's GPUs (hwloc's, else the configuration's gpus), for --gpus-per-task and the like.
  const std::vector<proc::Gpu>* gpus = nullptr;
  // What keeps each launch's processes together (a cgroup each, or the agent as subreaper);
  // null: nothing does (unit tests).
  proc::Containment* containment = nullptr;
  // The launches on this agent, as a spawned launch finds its parent (null: none, unit tests).
  ParentLaunches* parents = nullptr;
  // What the agent counts for its metrics: launches, their ends and fences (null: unit tests).
  admin::MetricsTally* metrics = nullptr;
};

// What the allocation a launch runs in gives it (agent/allocation.hpp): the group its processes'
// group is made in, and their further variables. The allocation outlives the launch.
struct LaunchAllocation {
  proc::AllocationGroup* group = nullptr;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<HatchHosts> hatch_hosts;  // its batch step's (launch_hatch.hpp)
  bool srun = false;      // its batch step finds lattice-srun as `srun` first on its PATH
  std::vector<int> cpus;  // the CPUs it holds here; empty: all the agent may use
};

class Launch : private WireUpEvents, private RankSet::Events, private LaunchHatch::Host {
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
  // Before start(): the launch runs in an allocation.
  void set_allocation(LaunchAllocation allocation) { allocation_ = std::move(allocation); }
  void forward_signal(int signum);
  // A fence chunk from a peer agent (multi-node launches only).
  void fence_message(wire::FenceMessage message);
  // A spawn from one of the launch's nodes, at its head: on to the launcher, whose answer
  // (the children's launch id, or why not) `answer` gets later; it may outlive the launch.
  void spawn_asked(wire::SpawnRequest request, std::function<void(Result<std::string>)> answer);
  // The head's word that the launch spawned `child` (PmixFamily; at the head from spawn_asked):
  // `done` once this node can route to its ranks, or why it cannot.
  void family_spawned(const wire::SpawnedLaunch& child, std::function<void(Status)> done);
  // A spawned launch of this family spawned `child` (layout over this launch's nodes): the
  // head tells every node, asked by this node if it is not the head; `answer`: the child's id
  // once all know it, or why not.
  void family_grew(wire::SpawnedLaunch child, std::function<void(Result<std::string>)> answer);
  // Where a spawned launch's names and collectives go (parent_launches.hpp).
  LaunchNames& names() { return names_; }
  LaunchConnects& connects() { return connects_; }
  // A name request from node `from` of the launch, at its head: the port, or why not (perhaps
  // on a later turn: a PMIx lookup may wait).
  void name_asked(int from, const wire::NameRequest& request,
                  std::function<void(const Result<std::string>&)> answer);
  // A PMIx collective entered on node `from`, at the head: answered once all its nodes entered.
  void collective_asked(int from, wire::CollectiveRequest request,
                        std::function<void(Result<wire::CollectiveAnswer>)> answer);
  // A direct modex from node `from` (as its link proved; authority.hpp): `answer` gets the
  // rank's data, or why there is none, later; it may outlive the launch.
  void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer);
  // A PMIx event or job control from node `from` (as its link proved).
  void pmix_event(int from, const pmix::EventNotice& notice, std::function<void(Status)> done) {
    wire_up_->event_received(from, notice, std::move(done));
  }
  Status pmix_control(int from, PmixControlMessage message) {
    return wire_up_->control_received(from, std::move(message));
  }
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
  // `peer_ended`: that agent closed it itself (Failure::peer_ended).
  void peer_lost(const std::string& node_id, const std::string& reason, bool peer_ended);
  void launcher_lost(const std::string& reason);
  // The agent is stopping: SIGTERM and a grace, or SIGKILL at once for `kill_now`.
  void shutdown(int signum, bool kill_now);

  const LaunchSpec& spec() const { return spec_; }
  // "RANK:CPUS" for each local rank bound by --cpu-bind (known once start() succeeded).
  std::vector<std::string> bindings() const;
  // A limit it asked for (--mem) that nothing on this node keeps, and why; empty: none (known
  // once start() succeeded).
  std::string unenforced_limits() const;
  const std::string& id() const { return spec_.launch_id; }
  const WireUp& wire_up() const { return *wire_up_; }
  std::vector<int> fence_children_pending() const { return fence_.children_pending(); }
  const FencePhaseLog& fence_phases() const { return fence_.phases(); }
  std::vector<std::pair<int, int>> rank_pids() const;  // (rank, pid)
  size_t ranks_running() const { return ranks_.running(); }
  uint64_t age_ms() const;
  uint64_t elapsed_us() const;  // since the request arrived: the clock of every figure it reports
  bool ended() const override { return policy_.ended(); }
  bool failing() const override { return policy_.failure().has_value(); }  // an abort is under way

 private:
  // RankSet::Events
  void rank_output(int rank, bool is_stderr, std::string data) override {
    sink_.output(*this, rank, is_stderr, std::move(data));
  }
  void rank_exited(int rank, int pid, net::ExitInfo info) override;
  void rank_pipe_closed(int rank) override { run(policy_.pipe_closed(rank)); }
  void input_taken(uint64_t bytes) override { sink_.input_taken(*this, bytes); }

  // WireUpEvents
  void rank_initialized(int rank) override;
  void rank_finalized(int rank) override;
  void fence_entered(uint64_t epoch, pmi::KvList contribution) override {
    fence_.enter(epoch, std::move(contribution));
  }
  void rank_aborted(int rank, std::optional<int> exit_code, std::string message) override {
    run(policy_.pmi_abort(rank, exit_code, message));
  }
  void rank_failed(int rank, std::string message, bool lost) override {
    // Usually a lost rank is exiting: its status, if it comes in time, says more.
    run(lost ? policy_.pmi_lost(rank, message) : policy_.pmi_error(rank, message));
  }
  void fence_unusable(uint64_t epoch, std::string message) override {
    run(policy_.fence_failed_above(epoch, message));
  }
  void rank_notice(int rank, std::string line) override {
    sink_.output(*this, rank, true, std::move(line));
  }
  void spawn_requested(wire::SpawnRequest request,
                       std::function<void(Result<std::string>)> answer) override;
  void signal_ranks(const std::vector<int>& ranks, int signum) override {
    for (int rank : ranks) ranks_.kill_rank(rank, signum);
  }
  void after_notice(std::function<void()> then) override;

  // LaunchHatch::Host (and ended(), failing())
  Result<std::unique_ptr<net::Process>> start_command(
      const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
      std::function<void(net::ExitInfo)> on_exit) override;
  void commands_done() override;

  void spawn_all();
  // At the head: every node learns the children's layout before the spawning rank hears of them.
  void tell_family(wire::SpawnedLaunch child, std::function<void(Result<std::string>)> answer);
  Status spawn_rank(RankSet::Rank& rank);
  // A root agent whose job runs as another user learns that user once (user_lookup.hpp) and
  // then switches in each rank's child; spawning waits for the answer.
  bool needs_user_lookup() const;
  void look_up_user();
  void user_known(Result<proc::ProcessUser> user);
  void give_up_user_lookup();
  // The per-launch directory, and in it the doors of the escape hatch and the wire-up.
  Status open_doors();
  // How a process of the launch starts: file, argv, environment, cwd, CPUs (below).
  void job_process(net::SpawnSpec& spawn, const std::string& program,
                   const std::vector<std::string>& args, const std::vector<int>& cpus,
                   std::vector<std::string> env) const;
  // lattice-rank-exec's command line for `program` with `args`, bound to `cpus` (if any).
  std::vector<std::string> rank_exec_argv(const std::string& program,
                                          const std::vector<std::string>& args,
                                          const std::vector<int>& cpus = {}) const;
  // Once no rank or command of the launch runs here: what they left behind is ended.
  void sweep_strays();
  void check_fence_deadline();
  void hold_neighbour_links();
  // Carries out the policy's actions, in order.
  void run(std::vector<policy::Action> actions);
  void kill_running(int signum);
  // `status` of a rank that died of SIGKILL, marked as the out-of-memory killer's when the
  // kernel counted a kill in the launch's group that no exit has been told of yet.
  proc::ExitStatus out_of_memory_or(proc::ExitStatus status);
  void end(const std::optional<Failure>& failure);
  void send_to_node(int node, rpc::Outgoing message) override;
  void send_to_nodes(const std::vector<int>& nodes, rpc::Outgoing message);
  void send_abort(int node, const Failure& failure);
  std::string where(int rank) const;  // "rank 3 on n1"
  uint64_t now_ms() const;
  // The launch's CXI credentials as rank environments carry them (none without CXI).
  std::optional<proc::RankEnvInput::Cxi> cxi_environment() const;

  net::Loop& loop_;
  LaunchSpec spec_;
  const std::string nodelist_;              // LATTICE_NODELIST, joined once (every rank gets it)
  const std::string slurm_nodelist_;        // SLURM_NODELIST, under slurm_compat
  const std::string slurm_tasks_per_node_;  // SLURM_TASKS_PER_NODE, likewise
  const LaunchEnvironment& env_;
  LaunchSink& sink_;
  NodeLinks& peers_;
  std::vector<NodeLinks::Hold> link_holds_;  // the tree neighbours', while the launch lives
  uint64_t started_ns_;
  LaunchFamily family_;  // the launches it spawned
  LaunchNames names_;
  LaunchConnects connects_;  // PMIx collectives over some procs
  std::unique_ptr<WireUp> wire_up_;
  LaunchFence fence_;
  RankSet ranks_;
  std::vector<std::string> programs_;      // each app's executable, resolved by start()
  std::unique_ptr<LaunchDir> launch_dir_;  // <socket dir>/lattice-<random>, removed at the end
  net::Timer watch_timer_;
  net::Timer links_timer_;  // holds the neighbours' links if no rank has started PMI by then
  net::Timer spawn_timer_;
  std::vector<std::unique_ptr<net::Timer>> notice_timers_;  // after_notice's, kept to the end
  // The job's user as this node has it, once learned (or why it could not be), and whether
  // spawn_all() is waiting for that.
  std::unique_ptr<UserLookup> user_lookup_;
  std::optional<Result<proc::ProcessUser>> job_user_;
  bool spawn_waiting_ = false;
  bool ranks_batch_ = false;  // ranks start under SCHED_BATCH (LaunchSpec::ranks_batch)
  LaunchAllocation allocation_;
  std::string srun_dir_;  // where its batch step's `srun` is (allocation_.srun)
  policy::LaunchPolicy policy_;
  std::map<policy::TimerId, std::unique_ptr<net::Timer>> timers_;  // the policy's, by name
  std::vector<wire::Straggler> stragglers_;  // snapshot taken when a fence timeout ended the launch
  wire::NodeTimes times_;                    // its fences, from fence_'s log, at the end
  LaunchHatch hatch_;
  std::optional<std::optional<Failure>> end_after_execs_;  // end() waits for the hatch's commands
  // Every process the launch starts here joins group_; what is left in it when they are done
  // is swept before the launch ends (end() waits for that too).
  std::unique_ptr<proc::ProcessGroup> group_;
  // Of the OOM kills group_ counts, those already told (a rank's SIGKILL), or there before it.
  uint64_t oom_kills_seen_ = 0;
  bool sent_sigkill_ = false;  // the launch killed its ranks: a SIGKILL then is not the kernel's
  std::unique_ptr<StraySweep> sweep_;
  std::optional<std::optional<Failure>> end_after_sweep_;
  // The launcher's and other nodes' answers may come after the launch is gone.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lattice::agent
