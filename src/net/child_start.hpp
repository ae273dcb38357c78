// Starting a child process without copying this one: clone(CLONE_VM | CLONE_VFORK) as
// posix_spawn does, so the cost does not grow with the agent's memory, and what a guard used to
// do in an exec of its own (lattice-rank-exec) done between the clone and the exec: own session,
// the job's user, parent-death signal, fds in place, CPU binding, working directory (entered as
// the job's user), default signal handling.
// The child shares this process's memory until it execs or exits, so it only makes system calls
// on what the parent prepared (no allocation, no locks); this thread waits meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace lattice::net {

// Who the child becomes before anything else it does as someone: all three uids and gids, and
// exactly these supplementary groups (a root parent only). The ids are checked after the switch,
// and a child that could become root again fails rather than runs.
struct ChildUser {
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
};

// A resource limit the child starts with: its soft limit, capped by the hard limit it inherits
// (the hard limit itself is left alone).
struct ChildLimit {
  int resource = 0;   // RLIMIT_*
  uint64_t soft = 0;  // RLIM_INFINITY for none
};

struct ChildPlan {
  std::string file;               // path given to execve (already resolved)
  std::vector<std::string> argv;  // argv[0..]
  std::vector<std::string> env;   // the complete environment, "K=V"
  std::string cwd;                // empty: this process's
  std::vector<int> fds;           // fds[i] becomes the child's fd i; -1 leaves fd i alone
  bool new_session = true;        // setsid(): own session and process group
  int parent_death_signal = 0;    // sent to the child when this thread dies; 0: none
  std::vector<int> cpus;          // CPUs to bind to before the exec; empty: unbound
  // SCHED_BATCH: woken, the child does not preempt what runs (an overloaded node's agent keeps
  // answering the ranks that are ready instead of yielding to each one it wakes).
  bool sched_batch = false;
  std::optional<ChildUser> user;  // none: this process's ids
  // A cgroup.procs file the child writes "0" to before anything else, so that all it becomes
  // and starts stays in that cgroup; -1: stay in this process's.
  int cgroup_procs_fd = -1;
  // A cgroup v2 directory to clone the child into instead (CLONE_INTO_CGROUP: no migration);
  // where the kernel or the architecture cannot, the child writes to cgroup_procs_fd.
  int cgroup_dir_fd = -1;
  // cgroup.procs files of other hierarchies the child also writes "0" to, after joining (or
  // being cloned into) the one above: an allocation's limits kept by cgroup v1 controllers.
  std::vector<int> extra_cgroup_procs_fds;
  int umask = -1;                  // the child's umask; -1: this process's
  std::vector<ChildLimit> limits;  // applied before the exec
};

// The child's pid once it has exec'd, or what failed, with nothing left running (and no
// zombie): "cannot execute 'F': ...", "cannot change to directory 'D': ...",
// "cannot join the launch's cgroup: ...", "cannot join the allocation's cgroup: ...",
// "cannot set resource limit N: ...",
// "cannot bind to CPUs ...: ...", "cannot use SCHED_BATCH: ...", "cannot become uid U (gid G):
// ...". The caller reaps the pid.
Result<int> start_child(const ChildPlan& plan);

}  // namespace lattice::net
