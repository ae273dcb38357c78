// The launch's key-value store as one node sees it: puts wait for the next fence (uniformly,
// on one node or many), the merged store of a completed fence becomes visible to gets, and
// node attributes are node-local and visible at once. Every client key, value and rank budget
// is checked against Limits; engine-internal entries use reserved keys no client can name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/kv_store.hpp"
#include "base/result.hpp"
#include "pmi/limits.hpp"

namespace lattice::pmi {

using KvList = std::vector<std::pair<std::string, std::string>>;

// First byte of engine-internal keys (ring inputs). A control byte: check_key refuses every
// byte <= 0x20 in client keys, so clients can neither put nor get these.
constexpr char kReservedKeyMark = '\x01';

inline bool is_reserved_key(std::string_view key) {
  return !key.empty() && key[0] == kReservedKeyMark;
}

// A client key: 1..max_key bytes, each in 0x21..0x7e, none of '=' or ';' (they would break
// PMI-1 tokens and PMI-2 pairs).
Status check_key(std::string_view key, const Limits& limits);
// A client value: at most max_value bytes, no NUL (PMI-2 parsing stops there; capnp Text).
Status check_value(std::string_view key, std::string_view value, const Limits& limits);

class Kvs {
 public:
  explicit Kvs(Limits limits) : limits_(limits) {}

  // A client put, visible after the next fence.
  Status put(int rank, std::string_view key, std::string_view value);
  // An engine-internal entry (reserved key) carried by the next fence; never visible to gets.
  void put_reserved(std::string key, std::string value);
  // Puts since the previous call, in first-put order, each key once with its latest value.
  KvList take_pending();
  // The merged store of a completed fence: its client entries become visible (last one wins).
  // The store is kept whole as a sorted run of views into the bytes it arrived in (the tree's
  // merged stores arrive sorted): no key is hashed or copied on the way in. Runs are merged as
  // they pile up, a bounded step per publish, but not here: compact() does it, so the owner can
  // answer the fence's ranks first (see kvs.cpp).
  void publish(KvStore merged);
  // The merging the publishes since the last call owe. Returns the entries it merged.
  size_t compact();
  // Valid until the next publish or compact() (a merge may move entries into bytes of its own).
  std::optional<std::string_view> get(std::string_view key) const;
  // Bytes the published stores keep alive, including values since replaced (at most about twice
  // what is visible; see kvs.cpp).
  size_t bytes_held() const;
  // Runs a get may search (bounded, when compact() follows each publish; kvs.cpp).
  size_t runs() const { return runs_.size(); }

  // Node attributes: node-local, visible at once, charged to the putting rank's budget.
  Status put_node_attr(int rank, std::string_view key, std::string_view value);
  const std::string* node_attr(std::string_view key) const;

 private:
  enum class Space : char { kvs = 'k', node = 'n' };
  Status check_put(int rank, Space space, std::string_view key, std::string_view value);
  Status charge(int rank, Space space, std::string_view key, size_t bytes);
  void queue(std::string key, std::string value);
  size_t merge_step(size_t budget);
  bool start_merge();

  struct Usage {
    size_t keys = 0;
    size_t bytes = 0;
  };

  Limits limits_;
  // Published stores, oldest first; each sorted by key with each key once. Merges keep them
  // few: a handful left unmerged, O(log keys) more, and those published while a merge runs.
  std::vector<KvStore> runs_;
  // runs_[at] and runs_[at + 1] being merged into `out`, some entries per publish; until it is
  // done both stay in runs_ for gets.
  struct Merge {
    size_t at = 0;
    size_t older = 0, newer = 0;  // entries of each taken so far
    size_t step = 0;              // entries per publish at least: the merge ends within a few
    KvStore out;
  };
  std::optional<Merge> merge_;
  size_t owed_ = 0;  // entries the publishes since the last compact() may merge
  std::unordered_map<std::string, std::string> node_attrs_;
  KvList pending_;
  std::unordered_map<std::string, size_t> pending_index_;  // key -> position in pending_
  std::unordered_map<int, Usage> usage_;
  std::unordered_map<std::string, size_t> charged_;  // rank bytes, space, key -> bytes
};

}  // namespace lattice::pmi
