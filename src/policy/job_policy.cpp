#include "policy/job_policy.hpp"

#include <algorithm>
#include <csignal>

namespace lattice::policy {

void record_failure(std::optional<Failure>& current, Failure candidate) {
  // Higher explains more: naming a rank, then an account of its own.
  auto weight = [](const Failure& f) { return (f.rank >= 0 ? 2 : 0) + (f.peer_ended ? 0 : 1); };
  if (!current || weight(candidate) > weight(*current)) current = std::move(candidate);
}

JobPolicy::JobPolicy(int nodes, int head, bool kill_on_bad_exit)
    : nodes_(static_cast<size_t>(nodes)), head_(head), kill_on_bad_exit_(kill_on_bad_exit) {}

std::vector<JobAction> JobPolicy::sent(int node) {
  Node& n = nodes_.at(static_cast<size_t>(node));
  if (n.state != State::idle) return {};
  n.state = State::sent;
  n.asked = true;
  return {};
}

std::vector<JobAction> JobPolicy::accepted(int node) {
  Node& n = nodes_.at(static_cast<size_t>(node));
  std::vector<JobAction> out;
  if (n.state != State::sent) return out;
  n.state = State::live;
  // A signal forwarded while this node was still being asked reaches it now: it stops ranks
  // that start after it, or keeps them from starting (policy/launch_policy.hpp).
  if (!aborting_)
    for (int signum : forwarded_) out.push_back(SignalNode{node, signum});
  dispatch(out);
  return out;
}

std::vector<JobAction> JobPolicy::ended(int node, std::optional<Failure> failure, bool head_told) {
  Node& n = nodes_.at(static_cast<size_t>(node));
  std::vector<JobAction> out;
  n.ended = true;
  if (n.state == State::done) return out;
  set_done(n);
  if (failure && !kill_on_bad_exit_ &&
      (failure->kind == FailureKind::exited || failure->kind == FailureKind::out_of_memory)) {
    record_failure(failure_, std::move(*failure));  // -K0: the job's status, not an abort
    dispatch(out);
  } else if (failure) {
    n.ended_failed = true;
    // The failing agent has told its head (or is the head, and has told everyone).
    out = abort(std::move(*failure), head_told || node == head_);
  } else {
    dispatch(out);  // a head that ended cleanly while aborting passed nothing on
  }
  check_finished(out);
  return out;
}

std::vector<JobAction> JobPolicy::node_out(int node, Failure failure, Out how) {
  Node& n = nodes_.at(static_cast<size_t>(node));
  if (n.state == State::done) return {};
  set_done(n);
  n.refused = how == Out::refused;
  if (how == Out::not_asked) n.asked = false;
  std::vector<JobAction> out{DropNode{node}};
  auto more = abort(std::move(failure), false);
  out.insert(out.end(), more.begin(), more.end());
  check_finished(out);
  return out;
}

std::vector<JobAction> JobPolicy::signal(int signum) {
  if (finished_) return {};
  if (signum == SIGINT && ++interrupts_ >= 2)
    return failed(Failure{"interrupted (second SIGINT): ranks killed", 128 + SIGINT});
  if (std::find(forwarded_.begin(), forwarded_.end(), signum) == forwarded_.end())
    forwarded_.push_back(signum);
  std::vector<JobAction> out;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].state == State::live) out.push_back(SignalNode{static_cast<int>(i), signum});
  return out;
}

std::vector<JobAction> JobPolicy::failed(Failure failure) {
  if (finished_) return {};
  auto out = abort(std::move(failure), false);
  check_finished(out);
  return out;
}

std::vector<JobAction> JobPolicy::abort(Failure failure, bool head_knows) {
  std::vector<JobAction> out;
  if (!aborting_) abort_failure_ = failure;
  record_failure(failure_, std::move(failure));
  aborting_ = true;
  head_knows_ = head_knows_ || head_knows;
  dispatch(out);
  return out;
}

void JobPolicy::dispatch(std::vector<JobAction>& out) {
  if (!aborting_) return;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].state != State::idle) continue;
    set_done(nodes_[i]);  // never asked: nothing runs there
    out.push_back(DropNode{static_cast<int>(i)});
  }
  const Node& head = nodes_[static_cast<size_t>(head_)];
  if (head.state == State::sent) return;  // its answer decides: accepted, or out
  if (head.state == State::live) {
    if (!head_knows_) out.push_back(AbortNode{head_, abort_failure_});
    head_knows_ = true;  // an abort that reaches an agent before its launch waits there for it
    return;
  }
  if (head.ended_failed) return;  // it told every node when it failed
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (n.state != State::live || n.told) continue;
    n.told = true;
    out.push_back(AbortNode{static_cast<int>(i), abort_failure_});
  }
}

void JobPolicy::set_done(Node& n) {
  n.state = State::done;
  ++done_;  // callers change only nodes that were not done
}

void JobPolicy::check_finished(std::vector<JobAction>& out) {
  if (finished_ || done_ < nodes_.size()) return;  // a count: each end is O(1) at any size
  finished_ = true;
  out.push_back(Finish{});
}

}  // namespace lattice::policy
