// The seam between a launch's PMI server and whatever completes its fences: on one node the
// local fence completes at once; across nodes the agent tree does (tree_fence.hpp). Completion
// is always delivered on a later loop turn (CompletionQueue), never from inside enter(), so the
// PMI engine is never re-entered from one of its own hooks.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/kv_store.hpp"
#include "net/timer.hpp"
#include "pmi/server.hpp"

namespace lattice::agent {

class Fence {
 public:
  virtual ~Fence() = default;
  // All local ranks entered `epoch`; `puts` are theirs since the previous fence.
  virtual void enter(uint64_t epoch, pmi::KvList puts) = 0;
  // Child nodes whose contribution to the fence in flight has not fully arrived (admin).
  virtual std::vector<int> children_pending() const = 0;
};

// The merged store is handed over (moved): the PMI server keeps the chunks it came in and views
// them, rather than copies.
using FenceCompleteFn = std::function<void(uint64_t epoch, KvStore merged)>;

// Delivers completed fences on the next loop turn, in order.
class CompletionQueue {
 public:
  CompletionQueue(net::Loop& loop, FenceCompleteFn complete)
      : timer_(loop), complete_(std::move(complete)) {}

  void push(uint64_t epoch, KvStore merged) {
    ready_.emplace_back(epoch, std::move(merged));
    timer_.start(0, 0, [this] {
      while (!ready_.empty()) {
        auto [epoch_done, store] = std::move(ready_.front());
        ready_.pop_front();
        complete_(epoch_done, std::move(store));
      }
    });
  }

 private:
  net::Timer timer_;
  FenceCompleteFn complete_;
  std::deque<std::pair<uint64_t, KvStore>> ready_;
};

// Every rank on this node: the local puts are the merged store.
class LocalFence : public Fence {
 public:
  LocalFence(net::Loop& loop, FenceCompleteFn complete) : queue_(loop, std::move(complete)) {}
  void enter(uint64_t epoch, pmi::KvList puts) override {
    queue_.push(epoch, owning_store(std::move(puts)));
  }
  std::vector<int> children_pending() const override { return {}; }

 private:
  CompletionQueue queue_;
};

}  // namespace lattice::agent
