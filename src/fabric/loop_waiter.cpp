#include "fabric/loop_waiter.hpp"

namespace lattice::fabric {

void LoopWaiter::after(uint64_t ms, std::function<void()> fn) {
  auto it = timers_.emplace(timers_.end(), loop_);
  it->start(ms, 0, [this, it, fn = std::move(fn)] {
    auto run = fn;
    timers_.erase(it);  // destroys this timer; the copy above outlives it
    run();
  });
}

}  // namespace lattice::fabric
