// Timer: a uv_timer_t behind the handle template; the callback runs from a copy so that it may
// replace or destroy its own Timer.
#include "net/timer.hpp"

#include <uv.h>

#include <cstdlib>

#include "net/detail/handle.hpp"

namespace lattice::net {

Timer::Timer(Loop& loop) : handle_(std::make_unique<Handle<uv_timer_t>>()) {
  // uv_timer_init cannot fail on a live loop; failing means the loop itself is broken.
  if (uv_timer_init(loop.raw(), handle_->get()) != 0) std::abort();
  handle_->initialised(this);
}

Timer::~Timer() = default;

void Timer::start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> fn) {
  fn_ = std::move(fn);
  uv_timer_start(
      handle_->get(),
      [](uv_timer_t* t) {
        auto* self = owner_of<Timer>(t);
        if (!self) return;
        auto callback = self->fn_;
        guarded("timer", callback);
      },
      timeout_ms, repeat_ms);
}

void Timer::stop() { uv_timer_stop(handle_->get()); }

bool Timer::active() const { return uv_is_active(handle_->base()) != 0; }

}  // namespace lattice::net
