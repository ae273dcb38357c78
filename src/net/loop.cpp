// Loop lifetime and deferred work. The deferred queue rides on one idle handle that is active
// only while work is queued, so an idle loop still blocks in poll.
#include "net/loop.hpp"

#include <uv.h>

#include <cstdlib>
#include <string>

#include "net/detail/handle.hpp"

namespace lattice::net {

std::string uv_error(int code) { return uv_strerror(code); }

void close_and_free(uv_handle_t* handle) {
  uv_close(handle, [](uv_handle_t* h) { std::free(h); });
}

Loop& Loop::from(uv_loop_t* raw) { return *static_cast<Loop*>(raw->data); }

char* Loop::read_buffer() {
  if (!read_buffer_) read_buffer_.reset(new char[kReadBufferBytes]);
  return read_buffer_.get();
}

Loop::Loop() : loop_(std::make_unique<uv_loop_t>()), idle_(std::make_unique<Handle<uv_idle_t>>()) {
  // Failing here means no epoll/eventfd: the process cannot do anything useful.
  if (uv_loop_init(raw()) != 0) std::abort();
  loop_->data = this;
  if (uv_idle_init(raw(), idle_->get()) != 0) std::abort();
  idle_->initialised(this);
}

Loop::~Loop() {
  closing_ = true;
  deferred_.clear();
  idle_->close();
  uv_walk(
      raw(),
      [](uv_handle_t* h, void*) {
        if (uv_is_closing(h)) return;
        h->data = nullptr;
        close_and_free(h);
      },
      nullptr);
  while (uv_run(raw(), UV_RUN_DEFAULT) != 0) {
  }
  uv_loop_close(raw());
}

int Loop::run() { return uv_run(raw(), UV_RUN_DEFAULT); }
void Loop::stop() { uv_stop(raw()); }

uint64_t Loop::now_ms() {
  uv_update_time(raw());
  return uv_now(raw());
}

void Loop::defer(std::function<void()> fn) {
  if (closing_) return;
  deferred_.push_back(std::move(fn));
  if (deferred_.size() == 1)
    uv_idle_start(idle_->get(), [](uv_idle_t* h) {
      if (auto* self = owner_of<Loop>(h)) self->run_deferred();
    });
}

void Loop::run_deferred() {
  // Work deferred by these callbacks waits for the next iteration.
  auto batch = std::move(deferred_);
  deferred_.clear();
  uv_idle_stop(idle_->get());
  for (auto& fn : batch) guarded("deferred", fn);
}

}  // namespace lattice::net
