// The fence reduction state machine (see reducer.hpp for the protocol and its invariants).
// Entries are packed once per node on the way up (its subtree's merge) and once at the root; on
// the way down each chunk's bytes are shared by the SendDown to every child and the store here.
#include "fence/reducer.hpp"

#include <algorithm>
#include <cassert>

#include "base/strings.hpp"

namespace lattice::fence {
namespace {

std::vector<Action> reject(int from, uint64_t epoch, std::string why) {
  std::vector<Action> out;
  out.emplace_back(Reject{from, epoch, std::move(why)});
  return out;
}

}  // namespace

Reducer::Reducer(int self, Tree tree, size_t max_chunk_bytes)
    : self_(self),
      tree_(tree),
      max_chunk_bytes_(max_chunk_bytes),
      parent_(tree.parent(self)),
      children_(tree.children(self)) {
  for (size_t slot = 0; slot < children_.size(); ++slot) child_slot_.emplace(children_[slot], slot);
  round_.from_children.resize(children_.size());
}

std::optional<std::string> Reducer::epoch_problem(uint64_t epoch) const {
  if (epoch <= completed_)
    return cat("stale: epoch ", epoch, " is not after completed epoch ", completed_);
  if (epoch > current())
    return cat("epoch ", epoch, " is ahead of the fence in progress (", current(), ")");
  return std::nullopt;
}

std::vector<Action> Reducer::local_ready(uint64_t epoch, KvList puts) {
  if (auto problem = epoch_problem(epoch)) return reject(self_, epoch, *problem);
  if (round_.local_in) return reject(self_, epoch, "duplicate: local ranks already entered");
  round_.local_in = true;
  round_.local = std::move(puts);
  std::vector<Action> out;
  reduce_if_ready(out);
  return out;
}

std::vector<Action> Reducer::from_child(int child, Chunk chunk) {
  const uint64_t epoch = chunk.epoch;
  auto slot = child_slot_.find(child);
  if (slot == child_slot_.end())
    return reject(child, epoch, cat("node ", child, " is not a child of node ", self_));
  if (auto problem = epoch_problem(epoch)) return reject(child, epoch, *problem);
  ChunkAssembly& assembly = round_.from_children[slot->second];
  if (round_.sent_up) return reject(child, epoch, "duplicate: contribution already complete");
  if (Status added = assembly.add(std::move(chunk)); !added)
    return reject(child, epoch, added.error().message);
  std::vector<Action> out;
  if (assembly.complete()) {
    ++round_.children_in;
    reduce_if_ready(out);
  }
  return out;
}

std::vector<Action> Reducer::from_parent(Chunk chunk) {
  const uint64_t epoch = chunk.epoch;
  if (parent_ < 0) return reject(parent_, epoch, "the root has no parent");
  if (auto problem = epoch_problem(epoch)) return reject(parent_, epoch, *problem);
  if (!round_.sent_up)
    return reject(parent_, epoch, "merged store arrived before this node sent its contribution");
  Status added = round_.down.add(chunk);  // shares the bytes with what goes down
  if (!added) return reject(parent_, epoch, added.error().message);
  std::vector<Action> out;
  if (!children_.empty()) fan_out(std::move(chunk), out);
  if (round_.down.complete()) complete(round_.down.take(), out);
  return out;
}

std::vector<int> Reducer::children_pending(uint64_t epoch) const {
  if (epoch <= completed_) return {};
  if (epoch > current()) return children_;
  std::vector<int> pending;
  if (round_.sent_up) return pending;  // the subtree was complete, and its parts moved on
  for (size_t slot = 0; slot < children_.size(); ++slot)
    if (!round_.from_children[slot].complete()) pending.push_back(children_[slot]);
  return pending;
}

bool Reducer::begun(uint64_t epoch) const {
  if (epoch <= completed_) return true;
  if (epoch != current()) return false;
  return round_.local_in || std::any_of(round_.from_children.begin(), round_.from_children.end(),
                                        [](const ChunkAssembly& a) { return a.started(); });
}

bool Reducer::local_entered(uint64_t epoch) const {
  if (epoch <= completed_) return true;
  return epoch == current() && round_.local_in;
}

void Reducer::reduce_if_ready(std::vector<Action>& out) {
  if (!round_.local_in || round_.children_in < children_.size()) return;
  assert(!round_.sent_up);
  const KvStore subtree = merge_round();  // views, alive while `subtree` is
  std::vector<Chunk> chunks = make_chunks(current(), subtree.entries, max_chunk_bytes_);
  if (parent_ < 0) {
    KvStore merged = store_of(chunks);  // the bytes that go down, viewed here too
    for (Chunk& chunk : chunks) fan_out(std::move(chunk), out);
    complete(std::move(merged), out);
    return;
  }
  for (Chunk& chunk : chunks) out.emplace_back(SendUp{std::move(chunk)});
  round_.sent_up = true;
}

KvStore Reducer::merge_round() {
  // Post-order: children in slot order, then the local puts; on a clash the later entry wins
  // (see reducer.hpp).
  KvStore all;
  for (ChunkAssembly& child : round_.from_children) append(all, child.take());
  for (const auto& [key, value] : round_.local) all.entries.emplace_back(key, value);
  keep_last_by_key(all.entries);
  return all;  // views into the children's chunks and round_.local, alive until packed
}

void Reducer::fan_out(Chunk chunk, std::vector<Action>& out) const {
  if (!children_.empty()) out.emplace_back(SendDown{children_, std::move(chunk)});
}

void Reducer::complete(KvStore merged, std::vector<Action>& out) {
  out.emplace_back(Complete{current(), std::move(merged)});
  completed_ = current();
  round_ = Round{};
  round_.from_children.resize(children_.size());
}

}  // namespace lattice::fence
