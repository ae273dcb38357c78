// A wake-up another thread may send to the loop (uv_async_t): the only way anything outside
// the loop's thread reaches it. Used for libpmix's progress thread (pmix/server.hpp), whose
// callbacks are queued there and drained here. Sends may coalesce: the callback drains all.
#pragma once

#include <functional>
#include <memory>

#include "net/loop.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

class Async {
 public:
  // Started here; it does not keep the loop alive on its own (unreferenced).
  Async(Loop& loop, std::function<void()> fn);
  ~Async();
  Async(const Async&) = delete;
  Async& operator=(const Async&) = delete;

  // Thread-safe; async-signal-safe too (libuv's guarantee).
  void send();

 private:
  std::unique_ptr<Handle<uv_async_s>> handle_;
  std::function<void()> fn_;
};

}  // namespace lattice::net
