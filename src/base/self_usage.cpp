#include "base/self_usage.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace lattice {

SelfUsage self_usage() {
  SelfUsage usage;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "re")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(statm, "%llu %llu", &size, &resident) == 2)
      usage.resident_bytes = resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    std::fclose(statm);
  }
  if (DIR* fds = ::opendir("/proc/self/fd")) {
    size_t entries = 0;
    while (dirent* e = ::readdir(fds))
      if (e->d_name[0] != '.') ++entries;
    ::closedir(fds);
    usage.open_fds = entries > 0 ? entries - 1 : 0;  // not the directory's own descriptor
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    usage.max_fds = static_cast<size_t>(limit.rlim_cur);
  return usage;
}

}  // namespace lattice
