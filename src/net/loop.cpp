#include "net/loop.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

#include "net/handle.hpp"

namespace lattice::net {

std::string uv_error(int code) { return uv_strerror(code); }

Loop::Loop() {
  if (uv_loop_init(&loop_) != 0) std::abort();
}

Loop::~Loop() {
  uv_walk(
      &loop_,
      [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) {
          h->data = nullptr;
          uv_close(h, [](uv_handle_t* handle) { std::free(handle); });
        }
      },
      nullptr);
  while (uv_run(&loop_, UV_RUN_DEFAULT) != 0) {
  }
  uv_loop_close(&loop_);
}

int Loop::run() { return uv_run(&loop_, UV_RUN_DEFAULT); }
void Loop::stop() { uv_stop(&loop_); }

uint64_t Loop::now_ms() {
  uv_update_time(&loop_);
  return uv_now(&loop_);
}

// A write to a vanished peer must be an EPIPE error, not a silent death (build-notes.md).
void ignore_sigpipe() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace lattice::net
