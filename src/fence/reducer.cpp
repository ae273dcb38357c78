// The fence reduction state machine (see reducer.hpp for the protocol and its invariants).
// Stores are moved, never copied, on the way up; on the way down each chunk is copied once, into
// the assembly that completes the fence here, and goes to every child in one SendDown.
#include "fence/reducer.hpp"

#include <cassert>
#include <map>

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
  // The assembly keeps its own copy; a leaf has nobody to forward to and moves instead.
  Status added = children_.empty() ? round_.down.add(std::move(chunk)) : round_.down.add(chunk);
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

bool Reducer::local_entered(uint64_t epoch) const {
  if (epoch <= completed_) return true;
  return epoch == current() && round_.local_in;
}

void Reducer::reduce_if_ready(std::vector<Action>& out) {
  if (!round_.local_in || round_.children_in < children_.size()) return;
  assert(!round_.sent_up);
  KvList merged = merge_round();
  if (parent_ < 0) {
    for (Chunk& chunk : make_chunks(current(), merged, max_chunk_bytes_))
      fan_out(std::move(chunk), out);
    complete(std::move(merged), out);
    return;
  }
  for (Chunk& chunk : make_chunks(current(), std::move(merged), max_chunk_bytes_))
    out.emplace_back(SendUp{std::move(chunk)});
  round_.sent_up = true;
}

KvList Reducer::merge_round() {
  // Later insert_or_assign wins: children in slot order, then the local puts (see reducer.hpp).
  std::map<std::string, std::string> store;
  auto absorb = [&store](KvList list) {
    for (auto& [key, value] : list) store.insert_or_assign(std::move(key), std::move(value));
  };
  for (ChunkAssembly& child : round_.from_children) absorb(child.take());
  absorb(std::move(round_.local));
  KvList merged;
  merged.reserve(store.size());
  while (!store.empty()) {
    auto node = store.extract(store.begin());
    merged.emplace_back(std::move(node.key()), std::move(node.mapped()));
  }
  return merged;
}

void Reducer::fan_out(Chunk chunk, std::vector<Action>& out) const {
  if (!children_.empty()) out.emplace_back(SendDown{children_, std::move(chunk)});
}

void Reducer::complete(KvList merged, std::vector<Action>& out) {
  out.emplace_back(Complete{current(), std::move(merged)});
  completed_ = current();
  round_ = Round{};
  round_.from_children.resize(children_.size());
}

}  // namespace lattice::fence
