// RAII for raw file descriptors, and the socketpairs ranks get as PMI_FD. Every fd is CLOEXEC:
// libuv 1.44 does not close stray fds in children (docs/building.md §4).
#pragma once

#include <unistd.h>

#include <utility>

#include "base/result.hpp"

namespace lattice::net {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// A connected AF_UNIX SOCK_STREAM pair, both ends CLOEXEC (net/child_start dup2s the child's end
// into place, which clears CLOEXEC on the child's copy only).
Result<std::pair<UniqueFd, UniqueFd>> make_socketpair();

}  // namespace lattice::net
