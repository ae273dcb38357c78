// Timers and signal watchers on the loop. Both are owned objects: destroying one stops it, and
// its callback never runs afterwards.
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
  // (Re)starts: fires after timeout_ms, then every repeat_ms (0 = once).
  void start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> fn);
  void stop();

 private:
  Handle<uv_timer_t> handle_;
  std::function<void()> fn_;
};

class SignalWatcher {
 public:
  SignalWatcher(Loop& loop, int signum, std::function<void(int signum)> fn);
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  Handle<uv_signal_t> handle_;
  std::function<void(int)> fn_;
};

}  // namespace lattice::net
