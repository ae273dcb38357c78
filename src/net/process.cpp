// Process::spawn: pipes and the channel made here, the child started by net/child_start (its
// fds 0-2 are the pipes, /dev/null or ours; inherited fds follow from 3), its exit seen through
// a pidfd on the loop.
#include "net/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>

#include "base/strings.hpp"
#include "net/child_start.hpp"
#include "net/detail/handle.hpp"
#include "net/fd.hpp"

namespace lattice::net {
namespace {

constexpr int kFirstInheritedFd = 3;  // after stdin, stdout, stderr

// The children a Process started and has not reaped yet: any other child of this process is an
// orphan it adopted as a subreaper (orphan_reaper.hpp).
std::set<int>& owned() {
  static std::set<int> pids;
  return pids;
}

// pidfd_open(2): glibc 2.36 has no wrapper in every build.
int pidfd_open(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// A pipe whose parent end becomes a Stream; both ends CLOEXEC (the child gets a dup2'd copy).
struct Pipe {
  UniqueFd parent, child;
};
Result<Pipe> make_pipe(bool child_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(cat("pipe: ", uv_error(-errno)));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  if (child_reads) return Pipe{std::move(write_end), std::move(read_end)};
  return Pipe{std::move(read_end), std::move(write_end)};
}

// The pidfd of a child whose Process went away while it ran: reaped when it exits, then the
// watcher closes. The pid rides in the handle's data, the pidfd is the handle's own fd.
void reap_orphan(uv_poll_t* handle, int, int) {
  auto pid = static_cast<pid_t>(reinterpret_cast<intptr_t>(handle->data));
  if (::waitpid(pid, nullptr, WNOHANG) == 0) return;  // not yet
  owned().erase(pid);
  uv_os_fd_t fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t*>(handle), &fd);
  close_and_free(reinterpret_cast<uv_handle_t*>(handle));  // stops polling at once
  if (fd >= 0) ::close(fd);
}

}  // namespace

bool started_here(int pid) { return owned().count(pid) > 0; }

Process::Process(ExitFn on_exit)
    : watcher_(std::make_unique<Handle<uv_poll_t>>()), on_exit_(std::move(on_exit)) {}

Result<std::unique_ptr<Process>> Process::spawn(Loop& loop, const SpawnSpec& spec, ExitFn on_exit) {
  std::unique_ptr<Process> self(new Process(std::move(on_exit)));
  ChildPlan plan{spec.file,
                 spec.argv,
                 spec.env,
                 spec.cwd,
                 {},
                 spec.new_session,
                 spec.parent_death_signal,
                 spec.cpus,
                 spec.sched_batch,
                 spec.user,
                 spec.cgroup_procs_fd,
                 spec.cgroup_dir_fd,
                 spec.extra_cgroup_procs_fds,
                 spec.umask,
                 spec.limits};

  // fds 0-2: a pipe, /dev/null (stdin only) or ours (-1: left as it is).
  Pipe pipes[3];
  const bool piped[3] = {spec.stdin_pipe, spec.capture_stdout, spec.capture_stderr};
  UniqueFd null_fd;
  plan.fds.assign(kFirstInheritedFd, -1);
  for (int fd = 0; fd < 3; ++fd) {
    if (piped[fd]) {
      auto pipe = make_pipe(fd == 0);
      if (!pipe) return pipe.error();
      pipes[fd] = std::move(pipe.value());
      plan.fds[static_cast<size_t>(fd)] = pipes[fd].child.get();
    } else if (fd == 0 && spec.stdin_null) {
      null_fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      if (!null_fd) return make_error(cat("cannot open /dev/null: ", uv_error(-errno)));
      plan.fds[0] = null_fd.get();
    }
  }
  std::optional<std::pair<UniqueFd, UniqueFd>> channel;  // (parent's end, child's end)
  if (spec.channel) {
    auto pair = make_socketpair();
    if (!pair) return pair.error();
    channel = std::move(pair.value());
    plan.fds.push_back(channel->second.get());
  }
  plan.fds.insert(plan.fds.end(), spec.inherit_fds.begin(), spec.inherit_fds.end());

  auto pid = start_child(plan);
  if (!pid) return pid.error();
  self->pid_ = pid.value();
  owned().insert(self->pid_);
  // Closed here, the child's ends leave the child the only writer: the parent then sees EOF
  // when it exits (docs/building.md §5).
  if (channel) channel->second.reset();
  for (auto& pipe : pipes) pipe.child.reset();
  null_fd.reset();

  // From here on a failure kills the child: nothing may run that the agent cannot see.
  auto fail = [&self](Error why) -> Result<std::unique_ptr<Process>> {
    self->kill_group(SIGKILL);
    ::waitpid(self->pid_, nullptr, 0);
    owned().erase(self->pid_);
    self->exited_ = true;
    return why;
  };
  self->pidfd_.reset(pidfd_open(self->pid_));
  if (!self->pidfd_) return fail(make_error(cat("pidfd_open: ", uv_error(-errno))));
  int rc = uv_poll_init(loop.raw(), self->watcher_->get(), self->pidfd_.get());
  if (rc != 0) return fail(make_error(cat("cannot watch pid ", self->pid_, ": ", uv_error(rc))));
  self->watcher_->initialised(self.get());
  uv_poll_start(self->watcher_->get(), UV_READABLE, [](uv_poll_t* handle, int, int) {
    if (auto* owner = owner_of<Process>(handle)) owner->reap();
  });
  if (channel) {
    auto stream = Stream::open_fd(loop, std::move(channel->first));
    if (!stream) return fail(stream.error());
    self->channel_ = std::move(stream.value());
  }
  static constexpr const char* kNames[3] = {" stdin", " stdout", " stderr"};
  std::unique_ptr<Stream>* targets[3] = {&self->stdin_, &self->stdout_, &self->stderr_};
  for (int fd = 0; fd < 3; ++fd) {
    if (!piped[fd]) continue;
    auto stream =
        Stream::open_fd(loop, std::move(pipes[fd].parent), cat("pid ", self->pid_, kNames[fd]));
    if (!stream) return fail(stream.error());
    *targets[fd] = std::move(stream.value());
  }
  return self;
}

void Process::reap() {
  int status = 0;
  if (exited_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return;  // a spurious wake-up
  exited_ = true;
  owned().erase(pid_);
  watcher_->close();
  pidfd_.reset();
  ExitInfo info;
  if (WIFEXITED(status)) info.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) info.term_signal = WTERMSIG(status);
  auto callback = on_exit_;  // a copy: the callback may destroy the Process
  guarded("exit", callback, info);
}

Process::~Process() {
  if (pid_ > 0 && !exited_ && watcher_->live()) {
    // Still running: the loop reaps it later, without being kept alive by it.
    uv_poll_t* handle = watcher_->get();
    watcher_->abandon();
    handle->data = reinterpret_cast<void*>(static_cast<intptr_t>(pid_));
    uv_poll_start(handle, UV_READABLE, reap_orphan);
    pidfd_.release();  // the orphan's watcher closes it
  }
}

int Process::kill_group(int signum) {
  if (exited_ || pid_ <= 0) return 0;
  if (::kill(-pid_, signum) == 0) return 0;
  if (errno == ESRCH && ::kill(pid_, signum) == 0) return 0;
  return -errno;
}

}  // namespace lattice::net
