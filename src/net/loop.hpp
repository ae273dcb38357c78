// The event loop: owns uv_loop_t. Its destructor closes whatever handles remain and runs the
// loop until their close callbacks have freed them, so it must outlive every handle owner.
// defer() runs work on the next loop iteration, outside the caller's stack (no re-entrancy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "net/uv_fwd.hpp"

namespace lattice::net {

class Loop {
 public:
  Loop();
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // The Loop behind a uv_loop_t made by this class.
  static Loop& from(uv_loop_s* raw);

  // libuv's loop, for net's .cpp files (and tests that drive libuv directly); opaque elsewhere.
  uv_loop_s* raw() { return loop_.get(); }
  int run();  // UV_RUN_DEFAULT: until stop() or nothing is left to do
  void stop();
  uint64_t now_ms();  // libuv's monotonic clock, refreshed

  // Runs fn on the next iteration. Deferred work still queued when the Loop is destroyed is
  // dropped, not run. fn must guard itself against its target having gone away meanwhile.
  void defer(std::function<void()> fn);
  // True once the destructor has begun: completions of pending requests (connects, name
  // lookups) are dropped then, because their owners are already gone.
  bool closing() const { return closing_; }
  // The one buffer every stream on this loop reads into: libuv fills it and the read callback
  // consumes it before the loop reads anything else, so one per loop (allocated at the first
  // read, never zero-filled) serves all, instead of 64 KiB per open stream.
  static constexpr size_t kReadBufferBytes = 64 * 1024;
  char* read_buffer();

 private:
  void run_deferred();

  std::unique_ptr<uv_loop_s> loop_;  // on the heap so that its type stays opaque here
  std::unique_ptr<Handle<uv_idle_s>> idle_;
  std::vector<std::function<void()>> deferred_;
  std::unique_ptr<char[]> read_buffer_;
  bool closing_ = false;
};

}  // namespace lattice::net
