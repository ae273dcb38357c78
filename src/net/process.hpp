// Child processes on the loop (uv_spawn): stdout/stderr captured as Streams, extra fds inherited
// at 3, 4, ..., each child in its own session and process group so that a kill reaches its
// whole tree. libuv reaps the child; its exit arrives through the exit callback.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "net/handle.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"

namespace lattice::net {

struct SpawnSpec {
  std::string file;               // path given to execve (already resolved)
  std::vector<std::string> argv;  // argv[0..]
  std::vector<std::string> env;   // the complete environment, "K=V"
  std::string cwd;                // empty = inherit
  std::vector<int> inherit_fds;   // become the child's fds 3, 4, ...
  bool capture_stdout = true;     // else inherited
  bool capture_stderr = true;
  bool new_session = true;        // setsid(): own session and process group
};

struct ExitInfo {
  int64_t exit_status = 0;
  int term_signal = 0;
};

class Process {
 public:
  using ExitFn = std::function<void(ExitInfo)>;
  static Result<std::unique_ptr<Process>> spawn(Loop& loop, const SpawnSpec& spec, ExitFn on_exit);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  int pid() const { return pid_; }
  bool exited() const { return exited_; }
  std::unique_ptr<Stream> take_stdout() { return std::move(stdout_); }
  std::unique_ptr<Stream> take_stderr() { return std::move(stderr_); }
  // kill(-pid, sig): the whole process group; the pid alone if the group is gone. 0 or -errno.
  int kill_group(int signum);

 private:
  explicit Process(ExitFn on_exit) : on_exit_(std::move(on_exit)) {}

  Handle<uv_process_t> handle_;
  ExitFn on_exit_;
  std::unique_ptr<Stream> stdout_, stderr_;
  int pid_ = -1;
  bool exited_ = false;
};

}  // namespace lattice::net
