// What this process holds of the machine, as its metrics report it (the figures every
// Prometheus client library exports for its process). Read from /proc when asked; 0 for a
// figure that cannot be read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lattice {

struct SelfUsage {
  uint64_t resident_bytes = 0;  // resident set (/proc/self/statm)
  size_t open_fds = 0;          // descriptors open now (/proc/self/fd)
  size_t max_fds = 0;           // the soft RLIMIT_NOFILE
};

SelfUsage self_usage();

}  // namespace lattice
