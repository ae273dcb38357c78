// Process::spawn maps SpawnSpec onto uv_process_options_t: the stdio array index is the child's
// fd number, so stdin/stdout/stderr take slots 0-2 and inherited fds follow from slot 3.
#include "net/process.hpp"

#include <signal.h>
#include <uv.h>

#include <cerrno>
#include <optional>

#include "base/strings.hpp"
#include "net/detail/handle.hpp"
#include "net/fd.hpp"

namespace lattice::net {
namespace {

constexpr int kFirstInheritedFd = 3;  // after stdin, stdout, stderr

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Process::Process(ExitFn on_exit)
    : handle_(std::make_unique<Handle<uv_process_t>>()), on_exit_(std::move(on_exit)) {}

Result<std::unique_ptr<Process>> Process::spawn(Loop& loop, const SpawnSpec& spec, ExitFn on_exit) {
  if (spec.file.empty() || spec.argv.empty())
    return make_error("cannot execute: no program or no argv[0] given");
  std::unique_ptr<Process> self(new Process(std::move(on_exit)));
  std::vector<char*> argv = c_strings(spec.argv);
  std::vector<char*> env = c_strings(spec.env);
  std::vector<int> inherited = spec.inherit_fds;
  std::optional<std::pair<UniqueFd, UniqueFd>> channel;  // (parent's end, child's end)
  if (spec.channel) {
    auto pair = make_socketpair();
    if (!pair) return pair.error();
    channel = std::move(pair.value());
    inherited.insert(inherited.begin(), channel->second.get());
  }

  std::vector<uv_stdio_container_t> stdio(kFirstInheritedFd + inherited.size());
  // Pipes for fds 0-2 live in Handles until they become Streams; an early return closes them.
  std::unique_ptr<Handle<uv_any_handle>> pipes[3];
  const bool piped[3] = {spec.stdin_pipe, spec.capture_stdout, spec.capture_stderr};
  for (int fd = 0; fd < 3; ++fd) {
    auto& slot = stdio[static_cast<size_t>(fd)];
    if (!piped[fd]) {
      if (fd == 0 && spec.stdin_null) {
        slot.flags = UV_IGNORE;  // libuv opens /dev/null for an ignored fd 0-2
      } else {
        slot.flags = UV_INHERIT_FD;
        slot.data.fd = fd;
      }
      continue;
    }
    pipes[fd] = std::make_unique<Handle<uv_any_handle>>();
    int rc = uv_pipe_init(loop.raw(), &pipes[fd]->get()->pipe, 0);
    if (rc != 0) return make_error(cat("cannot create a pipe for fd ", fd, ": ", uv_error(rc)));
    pipes[fd]->initialised(nullptr);
    // The flags name the child's side: it reads fd 0 and writes fds 1 and 2.
    slot.flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE |
                                             (fd == 0 ? UV_READABLE_PIPE : UV_WRITABLE_PIPE));
    slot.data.stream = pipes[fd]->stream();
  }
  for (size_t i = 0; i < inherited.size(); ++i) {
    stdio[kFirstInheritedFd + i].flags = UV_INHERIT_FD;
    stdio[kFirstInheritedFd + i].data.fd = inherited[i];
  }

  uv_process_options_t options{};
  options.file = spec.file.c_str();
  options.args = argv.data();
  options.env = env.data();
  options.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  options.stdio_count = static_cast<int>(stdio.size());
  options.stdio = stdio.data();
  options.flags = spec.new_session ? UV_PROCESS_DETACHED : 0;
  options.exit_cb = on_process_exit;

  int rc = uv_spawn(loop.raw(), self->handle_->get(), &options);
  // The handle is initialised even when uv_spawn fails, and must then be closed (self does).
  self->handle_->initialised(self.get());
  // The child's end must close here, or the parent's end never sees EOF (docs/building.md §5).
  if (channel) channel->second.reset();
  if (rc != 0) return make_error(cat("cannot execute '", spec.file, "': ", uv_error(rc)));
  self->pid_ = self->handle_->get()->pid;
  if (channel) {
    auto stream = Stream::open_fd(loop, std::move(channel->first));
    if (!stream) {  // a child we cannot talk to must not run on unseen
      self->kill_group(SIGKILL);
      return stream.error();
    }
    self->channel_ = std::move(stream.value());
  }
  static constexpr const char* kNames[3] = {" stdin", " stdout", " stderr"};
  std::unique_ptr<Stream>* targets[3] = {&self->stdin_, &self->stdout_, &self->stderr_};
  for (int fd = 0; fd < 3; ++fd)
    if (pipes[fd])
      *targets[fd] =
          std::make_unique<Stream>(std::move(pipes[fd]), cat("pid ", self->pid_, kNames[fd]));
  return self;
}

void Process::on_process_exit(uv_process_t* handle, int64_t exit_status, int term_signal) {
  auto* self = owner_of<Process>(handle);
  if (!self) {  // abandoned by ~Process while running: reaped now, nobody to tell
    close_and_free(reinterpret_cast<uv_handle_t*>(handle));
    return;
  }
  self->exited_ = true;
  auto callback = self->on_exit_;  // a copy: the callback may destroy the Process
  guarded("exit", callback, ExitInfo{exit_status, term_signal});
}

Process::~Process() {
  if (pid_ > 0 && !exited_) handle_->abandon();
}

int Process::kill_group(int signum) {
  if (exited_ || pid_ <= 0) return 0;
  if (::kill(-pid_, signum) == 0) return 0;
  if (errno == ESRCH && ::kill(pid_, signum) == 0) return 0;
  return -errno;
}

}  // namespace lattice::net
