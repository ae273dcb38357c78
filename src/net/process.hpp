// Child processes on the loop: stdout/stderr captured as Streams, extra fds inherited at 3, 4,
// ..., each child in its own session and process group so that a kill reaches its whole tree,
// optionally bound to CPUs and killed when this process dies (net/child_start: a clone that
// shares this process's memory until the exec, so spawning costs the same at any agent size).
// Its exit arrives through a pidfd watched by the loop, which reaps it. Caveat: the loop waits
// for the exec (docs/building.md §5).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "net/child_start.hpp"
#include "net/fd.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

struct SpawnSpec {
  std::string file;               // path given to execve (already resolved)
  std::vector<std::string> argv;  // argv[0..]
  std::vector<std::string> env;   // the complete environment, "K=V" (replaces the agent's)
  std::string cwd;                // empty = inherit
  // A fresh socketpair whose child end becomes fd 3 (before inherit_fds), the parent's end a
  // Stream (take_channel()): how ranks get PMI_FD and local agents their --ready-fd.
  bool channel = false;
  std::vector<int> inherit_fds;  // become the child's fds 3, 4, ... (the parent keeps its copies)
  bool capture_stdout = true;    // a pipe read through take_stdout(); else inherited
  bool capture_stderr = true;
  bool stdin_null = true;         // stdin from /dev/null; else inherited (or stdin_pipe)
  bool stdin_pipe = false;        // stdin from a pipe written through take_stdin() (wins over null)
  bool new_session = true;        // setsid(): own session and process group
  int parent_death_signal = 0;    // sent to the child if this process (its thread) dies; 0: none
  std::vector<int> cpus;          // bound to these before the exec (threads inherit it); empty: not
  bool sched_batch = false;       // SCHED_BATCH before the exec (ChildPlan::sched_batch)
  std::optional<ChildUser> user;  // the job's user, switched to before the cwd is entered
  int cgroup_procs_fd = -1;       // joined first thing (ChildPlan::cgroup_procs_fd); -1: none
  int cgroup_dir_fd = -1;         // or cloned into (ChildPlan::cgroup_dir_fd); -1: none
  std::vector<int> extra_cgroup_procs_fds;  // joined next (ChildPlan::extra_cgroup_procs_fds)
  int umask = -1;                           // -1: this process's
  std::vector<ChildLimit> limits;           // soft limits, capped by the inherited hard ones
};

struct ExitInfo {
  int64_t exit_status = 0;
  int term_signal = 0;  // 0 when the child exited normally
};

class Process {
 public:
  using ExitFn = std::function<void(ExitInfo)>;
  // A binary that cannot be executed is an Error ("cannot execute 'X': no such file or
  // directory"), reported synchronously, with every handle released. on_exit runs once, from
  // the loop; it may destroy the Process.
  static Result<std::unique_ptr<Process>> spawn(Loop& loop, const SpawnSpec& spec, ExitFn on_exit);
  // A child still running is not killed: the loop still reaps it (no zombie) without being
  // kept alive by it; on_exit is not called. Kill first if it must die.
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int pid() const { return pid_; }
  bool exited() const { return exited_; }
  // The captured output pipes (null when not captured, or taken already).
  std::unique_ptr<Stream> take_stdout() { return std::move(stdout_); }
  std::unique_ptr<Stream> take_stderr() { return std::move(stderr_); }
  // The parent's end of SpawnSpec::stdin_pipe (null when not asked for, or taken already).
  std::unique_ptr<Stream> take_stdin() { return std::move(stdin_); }
  // The parent's end of SpawnSpec::channel (null when not asked for, or taken already).
  std::unique_ptr<Stream> take_channel() { return std::move(channel_); }
  // kill(-pid, sig): the whole process group; the pid alone if there is no such group.
  // 0 or -errno; a no-op (0) once the child has been reaped, so a reused pid is never hit.
  int kill_group(int signum);

 private:
  explicit Process(ExitFn on_exit);
  void reap();

  UniqueFd pidfd_;  // declared before the watcher: closed after it (it must stop polling first)
  std::unique_ptr<Handle<uv_poll_s>> watcher_;
  ExitFn on_exit_;
  std::unique_ptr<Stream> stdin_, stdout_, stderr_, channel_;
  int pid_ = -1;
  bool exited_ = false;
};

// Whether `pid` is a child a Process started and has not reaped (the loop's thread only).
bool started_here(int pid);

}  // namespace lattice::net
