// net/ test helpers. run_until wakes through a deadline timer, so it never busy-waits. The
// forked client runs only async-signal-safe calls before _exit: the parent may have threads
// (libuv's pool, after a name lookup), and a forked copy of those must not be relied on.
#include "net_test_support.hpp"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "net/timer.hpp"

namespace lattice::net::test {

bool run_until(Loop& loop, const std::function<bool()>& done, uint64_t deadline_ms) {
  bool expired = false;
  Timer deadline(loop);
  deadline.start(deadline_ms, 0, [&] { expired = true; });
  while (!done() && !expired) uv_run(loop.raw(), UV_RUN_ONCE);
  return done();
}

StreamPair stream_pair(Loop& loop) {
  auto fds = make_socketpair();
  if (!fds.ok()) throw std::runtime_error("socketpair: " + fds.error().message);
  auto a = Stream::open_fd(loop, std::move(fds->first));
  auto b = Stream::open_fd(loop, std::move(fds->second));
  if (!a.ok() || !b.ok()) throw std::runtime_error("a stream over a socketpair failed to open");
  return StreamPair{std::move(a.value()), std::move(b.value())};
}

int live_handles(Loop& loop) {
  int count = 0;
  uv_walk(
      loop.raw(),
      [](uv_handle_t* h, void* arg) {
        if (!uv_is_closing(h)) ++*static_cast<int*>(arg);
      },
      &count);
  return count;
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lattice-net-test-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  return addr;
}

UniqueFd unix_connect(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr = unix_address(path);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return UniqueFd();
  return fd;
}

namespace {
// The child's exit codes, one per step that can fail.
enum ChildExit { kOk = 0, kSetgroups = 10, kSetgid, kSetuid, kSocket, kConnect };
}  // namespace

ForkedClient::ForkedClient(const sockaddr* addr, socklen_t len, uid_t uid, gid_t gid) {
  pid_ = ::fork();
  if (pid_ != 0) return;  // the parent, or a failed fork (pid -1: wait() says so)
  ::alarm(30);            // never outlive a test run that lost track of us
  if (::setgroups(0, nullptr) != 0) ::_exit(kSetgroups);
  if (::setgid(gid) != 0) ::_exit(kSetgid);
  if (::setuid(uid) != 0) ::_exit(kSetuid);
  int fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) ::_exit(kSocket);
  if (::connect(fd, addr, len) != 0) ::_exit(kConnect);
  char byte;
  while (::read(fd, &byte, 1) > 0) {
  }
  ::_exit(kOk);
}

ForkedClient::~ForkedClient() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::string ForkedClient::wait() {
  if (pid_ <= 0) return "fork failed";
  int status = 0;
  pid_t reaped = ::waitpid(std::exchange(pid_, -1), &status, 0);
  if (reaped < 0) return "waitpid failed";
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  switch (WEXITSTATUS(status)) {
    case kOk:
      return "exit 0";
    case kSetgroups:
      return "setgroups failed";
    case kSetgid:
      return "setgid failed";
    case kSetuid:
      return "setuid failed";
    case kSocket:
      return "socket failed";
    case kConnect:
      return "connect failed";
    default:
      return "exit " + std::to_string(WEXITSTATUS(status));
  }
}

}  // namespace lattice::net::test
