// The one way the code reads time outside the loop's own cached "now": a monotonic clock behind
// an interface, so engines and their owners can be driven by a fake one in tests.
#pragma once

#include <cstdint>

namespace lattice {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t now_ns() const = 0;  // monotonic; only differences mean anything
  uint64_t now_us() const { return now_ns() / 1000; }
  uint64_t now_ms() const { return now_ns() / 1000000; }
};

// CLOCK_MONOTONIC, as libuv's uv_hrtime() reads it.
class MonotonicClock final : public Clock {
 public:
  uint64_t now_ns() const override;
};

// The process's one MonotonicClock, for owners that take a Clock and have none injected.
const Clock& monotonic_clock();

}  // namespace lattice
