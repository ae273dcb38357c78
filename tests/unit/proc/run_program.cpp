// run_program: both pipes are drained together with poll, so a child that fills one while we
// wait on the other cannot stall the test.
#include "run_program.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lattice::proc::test {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Ran run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Ran ran;
  if (rc == 0) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&ran.out, &ran.err};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
      REQUIRE(::poll(fds, 2, 10000) > 0);
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[4096];
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0)
          sinks[i]->append(buf, static_cast<size_t>(n));
        else
          fds[i].fd = -1;  // EOF (or error): this stream is done
      }
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    ran.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  REQUIRE_MESSAGE(rc == 0, "posix_spawn " << argv[0] << " failed");
  return ran;
}

}  // namespace lattice::proc::test
