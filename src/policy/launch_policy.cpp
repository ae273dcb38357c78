#include "policy/launch_policy.hpp"

#include <csignal>
#include <utility>

#include "base/strings.hpp"

namespace lattice::policy {

LaunchPolicy::LaunchPolicy(LaunchShape shape, PolicyTimes times)
    : shape_(std::move(shape)), times_(times) {
  for (int rank : shape_.local_ranks) ranks_[rank];
}

std::vector<Action> LaunchPolicy::spawned(int rank, int pipes) {
  Rank* r = find(rank);
  if (!r || r->state != RankState::waiting) return {};
  r->state = RankState::running;
  r->pipes = pipes;
  return {};
}

std::vector<Action> LaunchPolicy::not_spawned(int rank, const std::string& why) {
  Rank* r = find(rank);
  if (!r || r->state != RankState::waiting) return {};
  r->state = RankState::exited;
  std::vector<Action> out;
  if (!why.empty()) out = fail(here(FailureKind::spawn_failed, rank, why), local(), -1, SIGKILL);
  settle(out);
  return out;
}

std::vector<Action> LaunchPolicy::spawn_finished() {
  std::vector<Action> out;
  spawn_finished_ = true;
  if (shape_.time_limit_ms && !failure_ && any_running()) {
    start(TimerId{TimerKind::time_limit}, shape_.time_limit_ms, out);
    if (shape_.warn_signal)
      start(TimerId{TimerKind::warn_signal},
            shape_.time_limit_ms > shape_.warn_before_ms
                ? shape_.time_limit_ms - shape_.warn_before_ms
                : 0,
            out);
  }
  settle(out);
  return out;
}

std::vector<Action> LaunchPolicy::exited(int rank, proc::ExitStatus status, bool finalize_missing) {
  Rank* r = find(rank);
  if (!r || r->state != RankState::running) return {};
  r->state = RankState::exited;
  std::vector<Action> out;
  if (r->lost_pmi_pending) {  // the exit says more than the lost connection did
    r->lost_pmi_pending = false;
    stop(TimerId{TimerKind::lost_pmi, rank}, out);
  }
  std::vector<Action> failed;
  bool bad = status.code != 0 || status.signal != 0;
  if (bad && !shape_.kill_on_bad_exit && !failure_) {
    if (!bad_exit_) bad_exit_ = exited_failure(rank, status);  // -K0: ends only this rank
  } else if (bad) {
    // The user asked the ranks to stop (a forwarded SIGINT/SIGTERM) and this one has: the
    // others, handling the same signal, get the grace before SIGKILL, not lose their handlers.
    failed = fail(exited_failure(rank, status), local(), -1, stopping_ ? 0 : SIGKILL);
  } else if (finalize_missing) {
    failed = fail(here(FailureKind::no_finalize, rank), local(), -1, SIGKILL);
  }
  out.insert(out.end(), failed.begin(), failed.end());
  settle(out);
  return out;
}

std::vector<Action> LaunchPolicy::pipe_closed(int rank) {
  Rank* r = find(rank);
  if (!r || r->pipes == 0) return {};
  --r->pipes;
  std::vector<Action> out;
  maybe_end(out);
  return out;
}

std::vector<Action> LaunchPolicy::output_paused() {
  std::vector<Action> out;
  output_paused_ = true;
  stop(TimerId{TimerKind::drain}, out);
  return out;
}

std::vector<Action> LaunchPolicy::output_resumed() {
  std::vector<Action> out;
  if (!std::exchange(output_paused_, false)) return out;
  // Pausing stopped the drain timer (or kept it from starting).
  if (draining_ && !ended_) start(TimerId{TimerKind::drain}, times_.drain_ms, out);
  return out;
}

std::vector<Action> LaunchPolicy::pmi_abort(int rank, std::optional<int> exit_code,
                                            const std::string& message) {
  Failure failure = here(FailureKind::abort_called, rank, message);
  // PMI-2 carries no code; Slurm's client exits 1 after sending abort, so report that.
  failure.exit_code = exit_code.value_or(1);
  failure.exit_code_given = exit_code.has_value();
  return fail(std::move(failure), local(), -1, SIGKILL);
}

std::vector<Action> LaunchPolicy::pmi_error(int rank, const std::string& message) {
  return fail(here(FailureKind::pmi_error, rank, message), local(), -1, SIGKILL);
}

std::vector<Action> LaunchPolicy::pmi_lost(int rank, const std::string& message) {
  Rank* r = find(rank);
  if (!r || r->state != RankState::running || r->lost_pmi_pending || ended_) return {};
  r->lost_pmi_pending = true;
  r->lost_pmi_reason = message;
  std::vector<Action> out;
  start(TimerId{TimerKind::lost_pmi, rank}, times_.lost_pmi_ms, out);
  return out;
}

std::vector<Action> LaunchPolicy::fence_timed_out(uint64_t epoch, uint32_t timeout_ms) {
  Failure failure = here(FailureKind::fence_timeout);
  failure.fence_epoch = epoch;
  failure.timeout_ms = timeout_ms;
  return fail(std::move(failure), local(), -1, SIGKILL);
}

std::vector<Action> LaunchPolicy::fence_failed_above(uint64_t epoch, const std::string& message) {
  return fail(Failure{message, 1, -1, epoch}, Tell::nobody, -1, SIGKILL);
}

std::vector<Action> LaunchPolicy::abort_received(AbortSource from, Failure failure) {
  // A time limit or the allocation's end stops ranks gently everywhere (as Slurm ends a job's
  // steps: SIGTERM, then SIGKILL after a grace); ranks that got the user's signal (an interrupt
  // before another node's ranks started) get the grace to handle it; any other failure kills
  // at once.
  const bool gently =
      failure.kind == FailureKind::time_limit || failure.kind == FailureKind::allocation_ended;
  int signum = gently ? SIGTERM : failure.kind == FailureKind::interrupted ? 0 : SIGKILL;
  // Only the head passes an abort on; it skips the node that told it.
  if (shape_.self != shape_.head) return fail(std::move(failure), Tell::nobody, -1, signum);
  int skip = std::holds_alternative<FromNode>(from) ? std::get<FromNode>(from).node : -1;
  return fail(std::move(failure), Tell::all, skip, signum);
}

bool told_head(const Failure& failure, const std::string& head_id) {
  return failure.kind != FailureKind::node_lost || failure.peer != head_id;
}

std::vector<Action> LaunchPolicy::peer_lost(int node, const std::string& node_id,
                                            const std::string& reason, bool peer_ended) {
  if (shape_.nodes < 2 || node == shape_.self) return {};
  // A lost head cannot be told; the launcher, which sees it lost too, tells the others.
  Tell tell = shape_.self == shape_.head ? Tell::all
              : node == shape_.head      ? Tell::nobody
                                         : Tell::head;
  Failure failure = here(FailureKind::node_lost, -1, reason);
  failure.peer = node_id;
  failure.peer_ended = peer_ended;
  return fail(std::move(failure), tell, node, SIGKILL);
}

std::vector<Action> LaunchPolicy::launcher_lost(const std::string& reason) {
  return fail(here(FailureKind::launcher_lost, -1, reason), local(), -1, SIGKILL);
}

std::vector<Action> LaunchPolicy::signal(int signum) {
  if (ended_) return {};
  bool stops = signum == SIGINT || signum == SIGTERM || signum == SIGHUP;
  stopping_ = stopping_ || stops;
  std::vector<Action> out;
  if (any_running()) out.push_back(KillRanks{signum});
  // Ranks still to start (their user being looked up, say) would never see the user's signal:
  // they do not start. The others already have it, so they get the grace, not a SIGKILL.
  if (stops && !all_done_spawning()) {
    Failure failure = here(FailureKind::interrupted);
    failure.signal = signum;
    failure.exit_code = 128 + signum;
    auto failed = fail(std::move(failure), local(), -1, 0);
    out.insert(out.end(), failed.begin(), failed.end());
  }
  return out;
}

std::vector<Action> LaunchPolicy::shutdown(int signum, bool kill_now) {
  if (kill_now) {
    auto out = fail(here(FailureKind::agent_killed), local(), -1, SIGKILL);
    if (kill_ != Kill::done) kill(SIGKILL, out);  // a second signal: no more grace
    return out;
  }
  Failure failure = here(FailureKind::agent_stopping);
  failure.signal = signum;
  return fail(std::move(failure), local(), -1, SIGTERM);
}

std::vector<Action> LaunchPolicy::timer_fired(TimerId timer) {
  if (ended_ || !timers_.erase(timer)) return {};
  std::vector<Action> out;
  switch (timer.kind) {
    case TimerKind::grace:
      kill(SIGKILL, out);
      break;
    case TimerKind::drain:
      out.push_back(CloseOutputs{});
      for (auto& [rank, r] : ranks_) r.pipes = 0;
      maybe_end(out);
      break;
    case TimerKind::time_limit: {
      Failure failure = here(FailureKind::time_limit);
      failure.timeout_ms = shape_.time_limit_ms;
      failure.exit_code = kTimeLimitExitCode;
      out = fail(std::move(failure), local(), -1, SIGTERM);
      break;
    }
    case TimerKind::warn_signal:
      if (!failure_ && any_running()) out.push_back(KillRanks{shape_.warn_signal});
      break;
    case TimerKind::lost_pmi: {
      Rank* r = find(timer.rank);
      if (!r || !r->lost_pmi_pending || r->state != RankState::running) break;
      r->lost_pmi_pending = false;
      out = fail(here(FailureKind::pmi_lost, timer.rank, r->lost_pmi_reason), local(), -1, SIGKILL);
      break;
    }
  }
  return out;
}

bool LaunchPolicy::running(int rank) const {
  auto it = ranks_.find(rank);
  return it != ranks_.end() && it->second.state == RankState::running;
}

std::vector<Action> LaunchPolicy::fail(Failure failure, Tell tell, int skip_node, int signum) {
  std::vector<Action> out;
  if (ended_) return out;
  if (!failure_) {
    failure_ = failure;
    out.push_back(FirstFailure{failure});
    if (failure.fence_epoch) out.push_back(SnapshotStragglers{failure.fence_epoch});
    if (shape_.nodes > 1 && tell == Tell::head) out.push_back(SendAbort{shape_.head, failure});
    if (shape_.nodes > 1 && tell == Tell::all)
      for (int node = 0; node < shape_.nodes; ++node)
        if (node != shape_.self && node != skip_node) out.push_back(SendAbort{node, failure});
  }
  // Kill once. Ranks dying of that kill are failures too, but must not cut a grace short.
  if (kill_ == Kill::none) kill(signum, out);
  maybe_end(out);
  return out;
}

void LaunchPolicy::kill(int signum, std::vector<Action>& out) {
  if (!any_running()) return;
  kill_ = signum == SIGKILL ? Kill::done : Kill::grace;
  if (signum != 0) out.push_back(KillRanks{signum});
  if (signum == SIGKILL)
    stop(TimerId{TimerKind::grace}, out);
  else
    start(TimerId{TimerKind::grace}, times_.grace_ms, out);
}

Failure LaunchPolicy::here(FailureKind kind, int rank, std::string detail) const {
  Failure failure;
  failure.kind = kind;
  failure.rank = rank;
  failure.detail = std::move(detail);
  failure.node = shape_.node_id;
  return failure;
}

Failure LaunchPolicy::exited_failure(int rank, proc::ExitStatus status) const {
  Failure failure =
      here(status.out_of_memory ? FailureKind::out_of_memory : FailureKind::exited, rank);
  failure.exit_code = proc::job_exit_code(status);
  failure.signal = status.signal;
  failure.memory_limit = status.memory_limit;
  return failure;
}

LaunchPolicy::Tell LaunchPolicy::local() const {
  return shape_.self == shape_.head ? Tell::all : Tell::head;
}

void LaunchPolicy::settle(std::vector<Action>& out) {
  if (ended_ || !all_done_spawning() || any_running()) return;
  stop(TimerId{TimerKind::grace}, out);
  bool pipes_open = false;
  for (const auto& [rank, r] : ranks_) pipes_open = pipes_open || r.pipes > 0;
  if (pipes_open && !draining_) {
    // Give pipes held by stray grandchildren a bounded time, then stop waiting for them.
    draining_ = true;
    if (!output_paused_) start(TimerId{TimerKind::drain}, times_.drain_ms, out);
  }
  maybe_end(out);
}

void LaunchPolicy::maybe_end(std::vector<Action>& out) {
  if (ended_ || !all_done_spawning() || any_running()) return;
  for (const auto& [rank, r] : ranks_)
    if (r.pipes > 0) return;
  ended_ = true;
  while (!timers_.empty()) stop(*timers_.begin(), out);
  out.push_back(ReportEnd{failure_ ? failure_ : bad_exit_});
}

void LaunchPolicy::start(TimerId timer, uint64_t ms, std::vector<Action>& out) {
  timers_.insert(timer);
  out.push_back(StartTimer{timer, ms});
}

void LaunchPolicy::stop(TimerId timer, std::vector<Action>& out) {
  if (timers_.erase(timer)) out.push_back(StopTimer{timer});
}

bool LaunchPolicy::any_running() const {
  for (const auto& [rank, r] : ranks_)
    if (r.state == RankState::running) return true;
  return false;
}

bool LaunchPolicy::all_done_spawning() const {
  if (!spawn_finished_) return false;
  for (const auto& [rank, r] : ranks_)
    if (r.state == RankState::waiting) return false;
  return true;
}

LaunchPolicy::Rank* LaunchPolicy::find(int rank) {
  auto it = ranks_.find(rank);
  return it == ranks_.end() ? nullptr : &it->second;
}

}  // namespace lattice::policy
