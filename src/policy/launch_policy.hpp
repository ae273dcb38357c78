// The failure policy of one launch on one agent, as a pure engine: events in (a rank exited, a
// PMI failure, an abort from a peer or the launcher, a lost peer or launcher, a fence timeout, a
// signal, agent shutdown, a timer), actions out (kill the ranks' process groups, send an abort to
// a node, start or stop a timer, close the ranks' output pipes, report the end). No I/O and no
// clock: agent::Launch carries out the actions in order, and the tests drive it directly.
//
// The rules, the same on every node:
//   - The first failure ends the launch: the live ranks are killed at once (SIGKILL; SIGTERM and
//     a grace period when the agent shuts down; only the grace, then SIGKILL, when the user's
//     SIGINT/SIGTERM was forwarded to them, so their handlers can finish) and no more are
//     spawned. Later failures change
//     nothing (ranks dying of a SIGTERM do not cut its grace short); a second shutdown signal or
//     the grace's end escalates to SIGKILL.
//   - The head decides for the launch. A failure that starts on a node other than the head is
//     reported to the head (one message); the head tells every other node (one message each),
//     except the node it heard it from and a node that is lost. A node told by the head, by the
//     launcher, or by its fence parent sends nothing: nobody echoes, and any failure costs O(N)
//     messages.
//   - With kill_on_bad_exit off (srun -K0) a non-zero exit ends only its rank; it is reported
//     as the launch's failure at the end unless something else failed first. A time limit
//     is a failure that stops ranks as shutdown does (SIGTERM, a grace, SIGKILL) everywhere.
//   - srun's --signal sends its signal to the ranks once, that long before the time limit; what
//     the ranks do with it is theirs.
//   - A forwarded SIGINT/SIGTERM that comes before every local rank has started keeps the rest
//     from starting: the launch fails as interrupted (status 128+N), and the ranks elsewhere,
//     which got the same signal, get the grace before SIGKILL.
//   - The launch ends once every local rank has exited (or never started) and its output pipes
//     are closed; pipes a stray grandchild keeps open get a bounded drain time. The grace timer
//     (SIGTERM -> SIGKILL) and the drain timer are separate timers, so neither cancels the other.
//     The drain time stops while the agent has stopped reading output for a slow launcher.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "policy/failure.hpp"
#include "proc/exit_status.hpp"

namespace lattice::policy {

// Named timers. `rank` is set for per-rank timers (lost_pmi), -1 otherwise.
enum class TimerKind { grace, drain, lost_pmi, time_limit, warn_signal };
struct TimerId {
  TimerKind kind;
  int rank = -1;
  bool operator<(const TimerId& o) const { return kind != o.kind ? kind < o.kind : rank < o.rank; }
  bool operator==(const TimerId& o) const { return kind == o.kind && rank == o.rank; }
};

struct FirstFailure {  // the launch has failed, for this reason (log it)
  Failure failure;
};
struct KillRanks {  // `signum` to the process group of every local rank still running
  int signum;
};
struct SendAbort {  // an AbortProcesses for this launch to node `node`
  int node;
  Failure failure;
};
struct StartTimer {
  TimerId timer;
  uint64_t ms;
};
struct StopTimer {
  TimerId timer;
};
struct SnapshotStragglers {  // a fence timed out: keep who never entered it, for the report
  uint64_t epoch;
};
struct CloseOutputs {};  // stop waiting for the ranks' output pipes (drain time is over)
struct ReportEnd {       // every local rank is done: tell the launcher (last action, once)
  std::optional<Failure> failure;
};
using Action = std::variant<FirstFailure, KillRanks, SendAbort, StartTimer, StopTimer,
                            SnapshotStragglers, CloseOutputs, ReportEnd>;

// Where an abort message came from (as its link proved it).
struct FromLauncher {};
struct FromNode {
  int node;
};
using AbortSource = std::variant<FromLauncher, FromNode>;

struct LaunchShape {
  std::string node_id;  // this node's name, for reasons ("rank 3 on n1")
  int self = 0;         // this node's index in the launch
  int head = 0;         // the head node's index
  int nodes = 1;
  std::vector<int> local_ranks;  // global ranks run here
  uint64_t time_limit_ms = 0;    // 0 = none; counted from the end of spawning
  bool kill_on_bad_exit = true;  // false (srun -K0): a non-zero exit ends only that rank
  // srun's --signal: warn_signal to the ranks warn_before_ms before the time limit (at once
  // when the limit is shorter); it ends nothing by itself. 0: none.
  int warn_signal = 0;
  uint64_t warn_before_ms = 0;
};

// The job status when its time limit ends it: timeout(1)'s, as scripts expect of a timeout.
constexpr int kTimeLimitExitCode = 124;

struct PolicyTimes {
  uint64_t grace_ms = 2000;     // SIGTERM -> SIGKILL (shutdown)
  uint64_t drain_ms = 3000;     // last exit -> stop waiting for output pipes
  uint64_t lost_pmi_ms = 2000;  // PMI dropped without finalize -> fail unless the rank exited
};

// Whether a node whose launch failed with `failure` told the launch's head (`head_id`): it does,
// unless what it lost was its link to the head (peer_lost).
bool told_head(const Failure& failure, const std::string& head_id);

class LaunchPolicy {
 public:
  LaunchPolicy(LaunchShape shape, PolicyTimes times = {});

  // Ranks and their pipes.
  // `rank` runs, with `pipes` output pipes open.
  std::vector<Action> spawned(int rank, int pipes);
  // `rank` could not be started (`why`), or was not started because the launch already failed
  // (`why` empty).
  std::vector<Action> not_spawned(int rank, const std::string& why);
  // Every local rank has been spawned or given up on (a node may have none).
  std::vector<Action> spawn_finished();
  // `finalize_missing`: it had called PMI init but exited 0 without finalize.
  std::vector<Action> exited(int rank, proc::ExitStatus status, bool finalize_missing);
  std::vector<Action> pipe_closed(int rank);
  // The agent stopped reading the ranks' output while the launcher catches up, and started
  // again: the drain time counts only while output is read (a slow launcher loses nothing).
  std::vector<Action> output_paused();
  std::vector<Action> output_resumed();

  // PMI.
  std::vector<Action> pmi_abort(int rank, std::optional<int> exit_code, const std::string& message);
  std::vector<Action> pmi_error(int rank, const std::string& message);  // a protocol error
  // The rank's PMI connection closed before finalize; judged when the timer fires, unless its
  // exit (the better reason) comes first.
  std::vector<Action> pmi_lost(int rank, const std::string& message);
  std::vector<Action> fence_timed_out(uint64_t epoch, uint32_t timeout_ms);
  // The fence parent sent an error down: the failure is known above already.
  std::vector<Action> fence_failed_above(uint64_t epoch, const std::string& message);

  // Peers, the launcher, the agent.
  std::vector<Action> abort_received(AbortSource from, Failure failure);
  // `peer_ended`: the peer closed the link itself (Failure::peer_ended). A lost head is told
  // nothing (told_head).
  std::vector<Action> peer_lost(int node, const std::string& node_id, const std::string& reason,
                                bool peer_ended = false);
  std::vector<Action> launcher_lost(const std::string& reason);
  // Forwarded by the launcher: not a failure, unless it stops ranks (SIGINT, SIGTERM, SIGHUP)
  // that have not all started; those then never start.
  std::vector<Action> signal(int signum);
  // The agent is stopping: `kill_now` (a second signal) uses SIGKILL instead of SIGTERM + grace.
  std::vector<Action> shutdown(int signum, bool kill_now);
  std::vector<Action> timer_fired(TimerId timer);

  const std::optional<Failure>& failure() const { return failure_; }
  bool ended() const { return ended_; }
  bool running(int rank) const;  // spawned and not exited

 private:
  enum class RankState { waiting, running, exited };
  struct Rank {
    RankState state = RankState::waiting;
    int pipes = 0;
    bool lost_pmi_pending = false;
    std::string lost_pmi_reason;
  };
  // Who else must hear of a first failure: nobody, the head, or every other node.
  enum class Tell { nobody, head, all };

  // `signum` as for kill().
  std::vector<Action> fail(Failure failure, Tell tell, int skip_node, int signum);
  Tell local() const;  // for a failure that starts here
  // A failure that happens on this node.
  Failure here(FailureKind kind, int rank = -1, std::string detail = "") const;
  Failure exited_failure(int rank, proc::ExitStatus status) const;
  // `signum` to the running ranks (0: none now, the user's own signal is already there); then
  // the grace and SIGKILL at its end, unless `signum` is SIGKILL.
  void kill(int signum, std::vector<Action>& out);
  // After a rank is done: stop the grace, start the drain, or end.
  void settle(std::vector<Action>& out);
  void maybe_end(std::vector<Action>& out);
  void start(TimerId timer, uint64_t ms, std::vector<Action>& out);
  void stop(TimerId timer, std::vector<Action>& out);
  bool any_running() const;
  bool all_done_spawning() const;
  Rank* find(int rank);

  LaunchShape shape_;
  PolicyTimes times_;
  std::map<int, Rank> ranks_;
  std::optional<Failure> failure_;
  std::optional<Failure> bad_exit_;  // the first non-zero exit that ended nothing (-K0)
  std::set<TimerId> timers_;         // started and not yet fired or stopped
  // How far killing the ranks got: not begun, a grace running (SIGKILL at its end), SIGKILL sent.
  enum class Kill { none, grace, done };
  Kill kill_ = Kill::none;
  bool stopping_ = false;  // the launcher forwarded a terminating signal (SIGINT/TERM/HUP)
  bool spawn_finished_ = false;
  bool draining_ = false;
  bool output_paused_ = false;  // the launcher reads slower than the ranks write
  bool ended_ = false;
};

}  // namespace lattice::policy
