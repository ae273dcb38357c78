// Per-launch, per-node state machine of the fence between agents: contributions in, actions out.
// Pure (no I/O, no clock): the agent feeds it local readiness and peers' chunks and carries out
// the returned actions in order. Fence deadlines and failure fan-out live in the agent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "fence/chunk.hpp"
#include "fence/tree.hpp"

namespace lattice::fence {

// Actions the agent carries out, in the order returned (forwarding comes before a Complete so
// children are not delayed by the local PMI responses).
struct SendUp {  // to the parent: one chunk of this node's subtree contribution
  Chunk chunk;
};
struct SendDown {  // one chunk of the merged store, to every child (one encoding for all)
  std::vector<int> children;
  Chunk chunk;
};
struct Complete {  // hand the merged store to the local PMI server
  uint64_t epoch;
  KvStore merged;  // views into the chunks it came in
};
struct Reject {  // duplicate / stale / malformed / misdirected input: log it, nothing else
  int from;      // the sending node; this node for local_ready, -1 for from_parent at the root
  uint64_t epoch;
  std::string why;
};
using Action = std::variant<SendUp, SendDown, Complete, Reject>;

// Up: when the local ranks have entered epoch E and every child's chunks for E are in, the
// node merges them and sends its subtree's contribution up in chunks; the root instead sends
// the merged store down and completes. Down: each chunk from the parent is forwarded to every
// child as it arrives; the node completes E when all of them are in.
//
// Only one epoch is ever in flight: completed_epoch() + 1. A node's ranks enter E+1 only after
// it completed E, and a child completes E only after this node forwarded E's last chunk, which
// is the call that completes E here; so anything older is stale and anything newer is a
// protocol error, both rejected. A child's E+1 contribution arriving before this node's ranks
// entered E+1 is the ordinary case and is buffered.
//
// Duplicate keys: the merged store is sorted by key, and on a clash the value latest in
// post-order wins: at each node its children's subtrees in Tree::children() order, then its own
// local puts (and among those the later entry). Ranks normally put distinct keys; this only
// makes a clash come out the same on every run.
class Reducer {
 public:
  Reducer(int self, Tree tree, size_t max_chunk_bytes = kDefaultChunkBytes);

  // Every local rank entered `epoch`; `puts` are theirs since the previous fence.
  std::vector<Action> local_ready(uint64_t epoch, KvList puts);
  // An upward chunk from a child (by value so a decoded chunk can be moved in).
  std::vector<Action> from_child(int child, Chunk chunk);
  // A downward chunk of the merged store from the parent: forwarded to the children as it came
  // (its bytes shared, not re-packed) and kept for the store here.
  std::vector<Action> from_parent(Chunk chunk);

  // Introspection for the admin socket and straggler reports.
  uint64_t completed_epoch() const { return completed_; }   // highest epoch completed here
  std::vector<int> children_pending(uint64_t epoch) const;  // subtree not fully arrived yet
  bool local_entered(uint64_t epoch) const;
  // Something of `epoch` is here: the local ranks' part, or a chunk of a child's.
  bool begun(uint64_t epoch) const;
  int self() const { return self_; }
  const Tree& tree() const { return tree_; }

 private:
  struct Round {  // state of epoch completed_ + 1
    bool local_in = false;
    KvList local;
    std::vector<ChunkAssembly> from_children;  // by slot, as in children_
    size_t children_in = 0;                    // complete entries of from_children
    bool sent_up = false;                      // contribution sent (non-root only)
    ChunkAssembly down;                        // merged store from the parent
  };

  uint64_t current() const { return completed_ + 1; }
  std::optional<std::string> epoch_problem(uint64_t epoch) const;
  void reduce_if_ready(std::vector<Action>& out);
  KvStore merge_round();
  void fan_out(Chunk chunk, std::vector<Action>& out) const;
  void complete(KvStore merged, std::vector<Action>& out);

  int self_;
  Tree tree_;
  size_t max_chunk_bytes_;
  int parent_;
  std::vector<int> children_;
  std::unordered_map<int, size_t> child_slot_;
  uint64_t completed_ = 0;
  Round round_;
};

}  // namespace lattice::fence
