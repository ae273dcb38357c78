// A launch's fences on this node, one owner for "which fence, since when": the fence that
// completes them (local, or the agent tree across nodes), when each reached each phase, whether
// the one its ranks wait in is past the launch's deadline, and who it still waits for. It
// carries the ranks' contributions from the wire-up backend up, and merged stores (or
// failures) back to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/fence.hpp"
#include "agent/fence_phases.hpp"
#include "agent/launch_spec.hpp"
#include "agent/tree_fence.hpp"
#include "agent/wire_up.hpp"
#include "net/loop.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {

class LaunchFence {
 public:
  using ClockFn = std::function<uint64_t()>;  // microseconds since the launch's request came
  using FailedFn = std::function<void(uint64_t epoch, const std::string& message)>;
  // `spec` and `wire_up` must outlive it. `failed_above`: a fence failed at a node above this
  // one (the backend's waiting ranks have been told already).
  LaunchFence(net::Loop& loop, const LaunchSpec& spec, WireUp& wire_up, ClockFn elapsed_us,
              TreeFence::SendFn send, FailedFn failed_above);

  // This node's ranks entered `epoch` with their contribution.
  void enter(uint64_t epoch, pmi::KvList contribution);
  // A chunk from another node of the launch.
  void receive(wire::FenceMessage message);
  // The fence this node's ranks wait in, once they have waited longer than the launch allows.
  std::optional<uint64_t> overdue(uint64_t now_ms) const;
  // Fence `epoch` failed here: the ranks waiting in it and the nodes below hear `message`.
  void fail(uint64_t epoch, const std::string& message);
  // Local ranks that never entered `epoch`, with their last wire-up call and its age.
  std::vector<wire::Straggler> stragglers(uint64_t epoch, uint64_t now_ms) const;

  bool spans_nodes() const { return tree_ != nullptr; }
  // The tree neighbours (parent first when there is one) and the parent, -1 at the root.
  std::vector<int> neighbors() const { return tree_ ? tree_->neighbors() : std::vector<int>{}; }
  int parent() const { return tree_ ? tree_->parent() : -1; }
  std::vector<int> children_pending() const { return fence_->children_pending(); }
  const FencePhaseLog& phases() const { return log_; }
  // `fn` hears how long each fence took here, from its last local rank's entry to the ranks'
  // release (the agent's metrics).
  void on_released(std::function<void(uint64_t duration_us)> fn) { on_released_ = std::move(fn); }

 private:
  void phase(uint64_t epoch, FencePhase phase) { log_.record(epoch, phase, elapsed_us_()); }
  void released(uint64_t epoch);

  const LaunchSpec& spec_;
  WireUp& wire_up_;
  ClockFn elapsed_us_;
  FencePhaseLog log_;
  std::function<void(uint64_t)> on_released_;
  std::unique_ptr<Fence> fence_;
  TreeFence* tree_ = nullptr;  // fence_ when the launch spans nodes
};

}  // namespace lattice::agent
