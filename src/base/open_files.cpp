#include "base/open_files.hpp"

#include <sys/resource.h>

#include <fstream>

namespace lattice {

namespace {
// An unlimited hard limit still cannot go past the kernel's per-process ceiling.
rlim_t kernel_ceiling() {
  std::ifstream in("/proc/sys/fs/nr_open");
  rlim_t value = 0;
  return in >> value && value > 0 ? value : rlim_t{1} << 20;
}
}  // namespace

size_t raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  rlim_t want = limit.rlim_max == RLIM_INFINITY ? kernel_ceiling() : limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want) {
    rlimit raised{want, limit.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.rlim_cur = want;
  }
  return limit.rlim_cur == RLIM_INFINITY ? static_cast<size_t>(kernel_ceiling())
                                         : static_cast<size_t>(limit.rlim_cur);
}

}  // namespace lattice
