// Waiter on the loop: one net::Timer per wait, dropped once it fired (or with the waiter).
#pragma once

#include <list>

#include "fabric/http.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::fabric {

class LoopWaiter : public Waiter {
 public:
  explicit LoopWaiter(net::Loop& loop) : loop_(loop) {}
  void after(uint64_t ms, std::function<void()> fn) override;

 private:
  net::Loop& loop_;
  std::list<net::Timer> timers_;
};

}  // namespace lattice::fabric
