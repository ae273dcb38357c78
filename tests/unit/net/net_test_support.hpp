// Helpers for net/ tests: run the loop until a condition holds (with a deadline instead of
// sleeps), count live handles to prove nothing leaked, make a fresh temp dir per test, and
// connect as another user from a forked child (for the peer-identity tests).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "net/fd.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"

namespace lattice::net::test {

// Generous: a loaded CI machine may be slow to fork, never this slow.
constexpr uint64_t kDeadlineMs = 10000;

// Runs the loop one event at a time until done() holds or the deadline passes; returns done().
bool run_until(Loop& loop, const std::function<bool()>& done, uint64_t deadline_ms = kDeadlineMs);

// Two Streams over the ends of one socketpair, not started.
struct StreamPair {
  std::unique_ptr<Stream> a, b;
};
StreamPair stream_pair(Loop& loop);

// Handles on the loop that are not closing (the Loop's own idle handle included).
int live_handles(Loop& loop);

// A fresh directory under $TMPDIR or /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The address of a Unix socket file, and a blocking CLOEXEC client connected to it (an invalid
// UniqueFd when connect fails).
sockaddr_un unix_address(const std::string& path);
UniqueFd unix_connect(const std::string& path);

// A forked child that drops to uid/gid (and no supplementary groups) *before* it creates its
// socket and connects to `addr`, so both the socket and the connection are that user's. It holds
// the connection until the other end closes it, then exits 0; exits 10-14 when a step fails
// (see status_text). Needs root. The destructor kills and reaps a child still running.
class ForkedClient {
 public:
  ForkedClient(const sockaddr* addr, socklen_t len, uid_t uid, gid_t gid);
  ~ForkedClient();
  ForkedClient(const ForkedClient&) = delete;
  ForkedClient& operator=(const ForkedClient&) = delete;

  pid_t pid() const { return pid_; }
  // Reaps the child (blocking) and describes how it ended: "exit 0", "setuid failed", ...
  std::string wait();

 private:
  pid_t pid_ = -1;
};

}  // namespace lattice::net::test
