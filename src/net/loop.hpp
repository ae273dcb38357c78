// The event loop: owns uv_loop_t. Its destructor closes whatever handles remain and runs the
// loop until their close callbacks have freed them, so it must outlive every handle owner.
// defer() runs work on the next loop iteration, outside the caller's stack (no re-entrancy).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "net/handle.hpp"

namespace lattice::net {

class Loop {
 public:
  Loop();
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // The Loop behind a uv_loop_t made by this class.
  static Loop& from(uv_loop_t* raw) { return *static_cast<Loop*>(raw->data); }

  uv_loop_t* raw() { return &loop_; }
  int run();  // UV_RUN_DEFAULT: until stop() or nothing is left to do
  void stop();
  uint64_t now_ms();  // libuv's monotonic clock, refreshed

  // Runs fn on the next iteration. Deferred work still queued when the Loop is destroyed is
  // dropped, not run. fn must guard itself against its target having gone away meanwhile.
  void defer(std::function<void()> fn);
  // True once the destructor has begun: completions of pending requests (connects, name
  // lookups) are dropped then, because their owners are already gone.
  bool closing() const { return closing_; }

 private:
  void run_deferred();

  uv_loop_t loop_;
  Handle<uv_idle_t> idle_;
  std::vector<std::function<void()>> deferred_;
  bool closing_ = false;
};

}  // namespace lattice::net
