// Timers on the loop. A Timer is an owned object: destroying it stops it, and its callback
// never runs afterwards. Not movable (libuv holds a pointer back to it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "net/loop.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

class Timer {
 public:
  explicit Timer(Loop& loop);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // (Re)starts: fires after timeout_ms, then every repeat_ms (0 = once). The callback may
  // restart, stop or destroy this timer.
  void start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> fn);
  void stop();
  bool active() const;

 private:
  std::unique_ptr<Handle<uv_timer_s>> handle_;
  std::function<void()> fn_;
};

}  // namespace lattice::net
