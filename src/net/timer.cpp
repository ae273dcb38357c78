#include "net/timer.hpp"

#include <cstdlib>

#include "base/log.hpp"

namespace lattice::net {

Timer::Timer(Loop& loop) {
  if (uv_timer_init(loop.raw(), handle_.get()) != 0) std::abort();
  handle_.initialised(this);
}

void Timer::start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> fn) {
  fn_ = std::move(fn);
  uv_timer_start(
      handle_.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<Timer*>(t->data);
        if (!self) return;
        // A copy: the callback may restart or destroy this timer.
        auto fn = self->fn_;
        try {
          fn();
        } catch (const std::exception& e) {
          LAT_LOG(error, "net", "timer callback threw: ", e.what());
        }
      },
      timeout_ms, repeat_ms);
}

void Timer::stop() { uv_timer_stop(handle_.get()); }

SignalWatcher::SignalWatcher(Loop& loop, int signum, std::function<void(int)> fn)
    : fn_(std::move(fn)) {
  if (uv_signal_init(loop.raw(), handle_.get()) != 0) std::abort();
  handle_.initialised(this);
  uv_signal_start(
      handle_.get(),
      [](uv_signal_t* s, int sig) {
        auto* self = static_cast<SignalWatcher*>(s->data);
        if (!self) return;
        auto fn = self->fn_;
        try {
          fn(sig);
        } catch (const std::exception& e) {
          LAT_LOG(error, "net", "signal callback threw: ", e.what());
        }
      },
      signum);
}

}  // namespace lattice::net
