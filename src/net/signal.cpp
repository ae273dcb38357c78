// SignalWatcher over uv_signal_t, and the SIGPIPE disposition.
#include "net/signal.hpp"

#include <uv.h>

#include <csignal>
#include <cstdlib>

#include "net/detail/handle.hpp"

namespace lattice::net {

SignalWatcher::SignalWatcher(Loop& loop, int signum, std::function<void(int)> fn)
    : handle_(std::make_unique<Handle<uv_signal_t>>()), fn_(std::move(fn)) {
  if (uv_signal_init(loop.raw(), handle_->get()) != 0) std::abort();
  handle_->initialised(this);
  int rc = uv_signal_start(
      handle_->get(),
      [](uv_signal_t* s, int sig) {
        auto* self = owner_of<SignalWatcher>(s);
        if (!self) return;
        auto callback = self->fn_;
        guarded("signal", callback, sig);
      },
      signum);
  if (rc != 0) {
    LAT_LOG(error, "net", "cannot watch signal ", signum, ": ", uv_error(rc));
    std::abort();
  }
}

SignalWatcher::~SignalWatcher() = default;

void ignore_sigpipe() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace lattice::net
