// The event loop: owns uv_loop_t. Its destructor closes whatever handles remain and runs the
// loop until their close callbacks have freed them, so it must outlive every handle owner.
#pragma once

#include <uv.h>

#include <cstdint>

namespace lattice::net {

class Loop {
 public:
  Loop();
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  uv_loop_t* raw() { return &loop_; }
  int run();
  void stop();
  uint64_t now_ms();  // libuv's monotonic clock, refreshed

 private:
  uv_loop_t loop_;
};

void ignore_sigpipe();

}  // namespace lattice::net
