// Fence for a launch whose ranks all live on this node: the local puts are the merged store.
// Completes on the next loop turn (see fence.hpp on why never synchronously).
#pragma once

#include <deque>
#include <utility>

#include "agent/fence.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class LocalFence : public Fence {
 public:
  LocalFence(net::Loop& loop, FenceCallbacks callbacks)
      : timer_(loop), callbacks_(std::move(callbacks)) {}

  void enter(uint64_t epoch, pmi::KvList puts) override {
    ready_.emplace_back(epoch, std::move(puts));
    timer_.start(0, 0, [this] {
      while (!ready_.empty()) {
        auto [epoch_done, merged] = std::move(ready_.front());
        ready_.pop_front();
        callbacks_.complete(epoch_done, merged);
      }
    });
  }

 private:
  net::Timer timer_;
  FenceCallbacks callbacks_;
  std::deque<std::pair<uint64_t, pmi::KvList>> ready_;
};

}  // namespace lattice::agent
