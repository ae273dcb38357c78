#include "base/clock.hpp"

#include <chrono>

namespace lattice {

uint64_t MonotonicClock::now_ns() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

const Clock& monotonic_clock() {
  static const MonotonicClock clock;
  return clock;
}

}  // namespace lattice
