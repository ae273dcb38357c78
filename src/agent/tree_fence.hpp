// The fence of a multi-node launch: this node's fence::Reducer (the pure tree reduction) wired
// to peer agents. Local readiness and peers' chunks go in; chunks go out to the parent or the
// children through a send function; completions reach the PMI server via the CompletionQueue.
#pragma once

#include <functional>
#include <string>

#include "agent/fence.hpp"
#include "agent/fence_phases.hpp"
#include "fence/reducer.hpp"
#include "rpc/session.hpp"
#include "wire/fence_chunk.hpp"

namespace lattice::agent {

class TreeFence : public Fence {
 public:
  // One message to each of `nodes` (encoded once however many they are).
  using SendFn = std::function<void(const std::vector<int>& nodes, rpc::Outgoing message)>;
  using FailFn = std::function<void(uint64_t epoch, const std::string& message)>;
  // Fence `epoch` reached `phase` here (reduced: contributions merged; store: all of the
  // merged store in).
  using PhaseFn = std::function<void(uint64_t epoch, FencePhase phase)>;
  TreeFence(net::Loop& loop, std::string launch_id, int self, fence::Tree tree, SendFn send,
            FenceCompleteFn complete, FailFn failed, PhaseFn phase);

  void enter(uint64_t epoch, pmi::KvList puts) override;
  std::vector<int> children_pending() const override;
  void receive(wire::FenceMessage message);
  // Tells the children that `epoch` failed (the launch is being aborted anyway; this makes
  // their ranks' fence answers say why, at once).
  void fail_down(uint64_t epoch, const std::string& message);
  // This node's parent and children: the links the fence uses, watched from the start.
  std::vector<int> neighbors() const;
  int parent() const;  // -1 at the root

 private:
  void run(std::vector<fence::Action> actions);
  rpc::Outgoing chunk_message(bool down, const fence::Chunk& chunk, const std::string& error) const;

  std::string launch_id_;
  fence::Reducer reducer_;
  SendFn send_;
  FailFn failed_;
  PhaseFn phase_;
  CompletionQueue queue_;
};

}  // namespace lattice::agent
