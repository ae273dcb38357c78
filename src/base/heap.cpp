#include "base/heap.hpp"

#include <malloc.h>

namespace lattice {

namespace {
// Above the largest buffer a stream moves at once (Loop's 64 KiB reads, a 64 KiB record's
// frame, a launch request), well under what an agent may hold anyway.
constexpr int kKeptBytes = 8 << 20;
}  // namespace

void keep_freed_memory_for_reuse() {
  ::mallopt(M_TRIM_THRESHOLD, kKeptBytes);
  ::mallopt(M_MMAP_THRESHOLD, kKeptBytes);
}

}  // namespace lattice
