#include "agent/tree_fence.hpp"

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

TreeFence::TreeFence(net::Loop& loop, std::string launch_id, int self, fence::Tree tree,
                     SendFn send, FenceCompleteFn complete, FailFn failed, PhaseFn phase)
    : launch_id_(std::move(launch_id)),
      reducer_(self, std::move(tree)),
      send_(std::move(send)),
      failed_(std::move(failed)),
      phase_(std::move(phase)),
      queue_(loop, std::move(complete)) {
  // Which tree this agent took from the request: agents that disagree refuse each other's chunks.
  if (log_level() < LogLevel::debug) return;  // the children's list is not built for nothing
  const auto& t = reducer_.tree();
  std::string children;
  for (int child : t.children(self)) children += cat(children.empty() ? "" : ",", child);
  LAT_LOG(debug, "fence", launch_id_, ": node ", self, " of ", t.size(), ", parent ",
          t.parent(self), ", children [", children, "]");
}

void TreeFence::enter(uint64_t epoch, pmi::KvList puts) {
  run(reducer_.local_ready(epoch, std::move(puts)));
}

std::vector<int> TreeFence::children_pending() const {
  // Between fences nothing waits for the children, though none has sent the next one's part.
  const uint64_t next = reducer_.completed_epoch() + 1;
  return reducer_.begun(next) ? reducer_.children_pending(next) : std::vector<int>{};
}

void TreeFence::receive(wire::FenceMessage message) {
  if (!message.error.empty()) {
    // Passed down as this node's own error chunk: the parent's chunk framing is not checked on
    // this path, and is not this node's to forward (found by fuzz_peer_pmix).
    fail_down(message.chunk.epoch, message.error);
    failed_(message.chunk.epoch, message.error);
    return;
  }
  if (message.down) {
    if (message.from != reducer_.tree().parent(reducer_.self())) {
      LAT_LOG(warn, "fence", launch_id_, ": merged store from node ", message.from,
              ", which is not this node's parent: dropped", log_fields({{"launch", launch_id_}}));
      return;
    }
    run(reducer_.from_parent(std::move(message.chunk)));
  } else {
    run(reducer_.from_child(message.from, std::move(message.chunk)));
  }
}

std::vector<int> TreeFence::neighbors() const {
  auto out = reducer_.tree().children(reducer_.self());
  if (int parent = reducer_.tree().parent(reducer_.self()); parent >= 0) out.push_back(parent);
  return out;
}

int TreeFence::parent() const { return reducer_.tree().parent(reducer_.self()); }

void TreeFence::fail_down(uint64_t epoch, const std::string& message) {
  fence::Chunk chunk;
  chunk.epoch = epoch;
  send_(reducer_.tree().children(reducer_.self()), chunk_message(true, chunk, message));
}

void TreeFence::run(std::vector<fence::Action> actions) {
  int parent = reducer_.tree().parent(reducer_.self());
  // The store is in (at the root: merged) before any of it goes on down, and is recorded so: a
  // child then always has it after its parent on any clock, which the launcher aligns them by.
  for (const auto& action : actions)
    if (const auto* done = std::get_if<fence::Complete>(&action)) {
      if (parent < 0) phase_(done->epoch, FencePhase::reduced);
      phase_(done->epoch, FencePhase::store);
    }
  for (auto& action : actions) {
    if (auto* up = std::get_if<fence::SendUp>(&action)) {
      if (up->chunk.index == 0) phase_(up->chunk.epoch, FencePhase::reduced);
      send_({parent}, chunk_message(false, up->chunk, ""));
    } else if (auto* down = std::get_if<fence::SendDown>(&action)) {
      send_(down->children, chunk_message(true, down->chunk, ""));
    } else if (auto* done = std::get_if<fence::Complete>(&action)) {
      LAT_LOG(debug, "fence", launch_id_, ": fence ", done->epoch, " complete, ",
              done->merged.entries.size(), " keys");
      queue_.push(done->epoch, std::move(done->merged));
    } else if (auto* reject = std::get_if<fence::Reject>(&action)) {
      LAT_LOG(warn, "fence", launch_id_, ": rejected a message from node ", reject->from,
              " for fence ", reject->epoch, ": ", reject->why,
              log_fields({{"launch", launch_id_}}));
    }
  }
}

rpc::Outgoing TreeFence::chunk_message(bool down, const fence::Chunk& chunk,
                                       const std::string& error) const {
  return wire::fence_chunk(launch_id_, reducer_.self(), down, chunk, error);
}

}  // namespace lattice::agent
