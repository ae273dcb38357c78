#include "net/orphan_reaper.hpp"

#include <glob.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>

#include "net/process.hpp"

namespace lattice::net {
namespace {

void reap_adopted(int) {
  // Orphans become children of a thread of this process (/proc/self/task/TID/children).
  glob_t tasks{};
  if (::glob("/proc/self/task/*/children", 0, nullptr, &tasks) != 0) return;
  for (size_t i = 0; i < tasks.gl_pathc; ++i) {
    std::ifstream in(tasks.gl_pathv[i]);
    int pid = 0;
    while (in >> pid)
      if (pid > 0 && !started_here(pid)) ::waitpid(pid, nullptr, WNOHANG);
  }
  ::globfree(&tasks);
}

}  // namespace

OrphanReaper::OrphanReaper(Loop& loop) : sigchld_(loop, SIGCHLD, reap_adopted) {}

}  // namespace lattice::net
