#include "net/process.hpp"

#include <signal.h>

#include <cerrno>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::net {

Result<std::unique_ptr<Process>> Process::spawn(Loop& loop, const SpawnSpec& spec, ExitFn on_exit) {
  std::unique_ptr<Process> self(new Process(std::move(on_exit)));

  std::vector<char*> argv, env;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);

  std::unique_ptr<Handle<uv_any_handle>> pipes[2];
  std::vector<uv_stdio_container_t> stdio(3 + spec.inherit_fds.size());
  stdio[0].flags = UV_IGNORE;  // /dev/null
  bool capture[2] = {spec.capture_stdout, spec.capture_stderr};
  for (int i = 0; i < 2; ++i) {
    auto& slot = stdio[static_cast<size_t>(i + 1)];
    if (!capture[i]) {
      slot.flags = UV_INHERIT_FD;
      slot.data.fd = i + 1;
      continue;
    }
    pipes[i] = std::make_unique<Handle<uv_any_handle>>();
    if (uv_pipe_init(loop.raw(), &pipes[i]->get()->pipe, 0) != 0)
      return make_error("cannot create an output pipe");
    pipes[i]->initialised(nullptr);
    slot.flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    slot.data.stream = reinterpret_cast<uv_stream_t*>(pipes[i]->get());
  }
  for (size_t i = 0; i < spec.inherit_fds.size(); ++i) {
    stdio[3 + i].flags = UV_INHERIT_FD;
    stdio[3 + i].data.fd = spec.inherit_fds[i];
  }

  uv_process_options_t options{};
  options.file = spec.file.c_str();
  options.args = argv.data();
  options.env = env.data();
  options.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  options.stdio_count = static_cast<int>(stdio.size());
  options.stdio = stdio.data();
  options.flags = spec.new_session ? UV_PROCESS_DETACHED : 0;
  options.exit_cb = [](uv_process_t* p, int64_t status, int term_signal) {
    auto* owner = static_cast<Process*>(p->data);
    if (!owner) return;
    owner->exited_ = true;
    auto fn = owner->on_exit_;  // the callback may destroy the Process
    try {
      fn(ExitInfo{status, term_signal});
    } catch (const std::exception& e) {
      LAT_LOG(error, "net", "exit callback threw: ", e.what());
    }
  };

  int rc = uv_spawn(loop.raw(), self->handle_.get(), &options);
  self->handle_.initialised(self.get());  // initialised even when uv_spawn fails: must be closed
  if (rc != 0)
    return make_error(cat("cannot execute '", spec.file, "': ", uv_error(rc)));
  self->pid_ = self->handle_.get()->pid;
  for (int i = 0; i < 2; ++i) {
    if (!pipes[i]) continue;
    auto stream = std::make_unique<Stream>(std::move(pipes[i]), cat("pid ", self->pid_));
    (i == 0 ? self->stdout_ : self->stderr_) = std::move(stream);
  }
  return self;
}

Process::~Process() = default;

int Process::kill_group(int signum) {
  if (exited_ || pid_ <= 0) return 0;
  if (::kill(-pid_, signum) == 0) return 0;
  if (::kill(pid_, signum) == 0) return 0;
  return -errno;
}

}  // namespace lattice::net
