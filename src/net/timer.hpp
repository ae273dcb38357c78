// Timers on the loop. A Timer is an owned object: destroying it stops it, and its callback
// never runs afterwards. Not movable (libuv holds a pointer back to it).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

#include "net/handle.hpp"
#include "net/loop.hpp"

namespace lattice::net {

class Timer {
 public:
  explicit Timer(Loop& loop);
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // (Re)starts: fires after timeout_ms, then every repeat_ms (0 = once). The callback may
  // restart, stop or destroy this timer.
  void start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> fn);
  void stop();
  bool active() const;

 private:
  Handle<uv_timer_t> handle_;
  std::function<void()> fn_;
};

}  // namespace lattice::net
