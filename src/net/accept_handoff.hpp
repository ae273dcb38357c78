// Vetting the connections of a listening socket that a library owns and accepts from its own
// thread (libpmix's listener). lattice-agentd defines accept(2) itself (accept_interpose.cpp,
// exported so that libraries bind to it): on the taken-over socket, accept() hands every new
// connection to the loop instead of returning it, and returns only connections the loop has
// vetted and handed back. To make the library's thread call accept() for a vetted one, the
// loop rings: it connects to the listener itself, and accept() knows that connection by its
// source port, closes it and returns the vetted one in its place. What the library gets is
// thus only what the loop let through; it never waits on a client that has not spoken.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/result.hpp"
#include "net/fd.hpp"

namespace lattice::net {

class AcceptHandoff {
 public:
  // Takes over `listening_fd`, a TCP socket listening on 127.0.0.1 that another thread
  // accepts from. `arrived` is called from that thread when new connections wait to be
  // vetted (it must be thread-safe: net::Async::send). An error when this process has no
  // accept() of its own (then nothing could be vetted).
  static Result<std::unique_ptr<AcceptHandoff>> install(int listening_fd,
                                                        std::function<void()> arrived);
  // Stops taking over: the library's accept() is its own again, and connections waiting to be
  // vetted or taken are closed.
  ~AcceptHandoff();
  AcceptHandoff(const AcceptHandoff&) = delete;
  AcceptHandoff& operator=(const AcceptHandoff&) = delete;

  // The connections accepted since the last call, for the loop to vet.
  std::vector<UniqueFd> take_arrived();
  // Gives a vetted connection to the library's next accept(), and rings.
  Status hand_over(UniqueFd connection);
  uint16_t port() const { return port_; }

 private:
  AcceptHandoff(int fd, uint16_t port) : fd_(fd), port_(port) {}
  void close_rung();  // ring sockets accept() has consumed
  int fd_;
  uint16_t port_;
  std::vector<UniqueFd> rings_;
};

// For the interposed accept(): true when `fd` is a taken-over listener; then *result is what
// accept() returns (a vetted connection, or -1 with errno ECONNABORTED, which listeners
// take as "try again").
bool handoff_accept(int fd, sockaddr* addr, socklen_t* addrlen, int* result);
// Called once by the interposed accept()'s own definition, at load: the proof that accept()
// in this process is ours, so that install() can refuse otherwise.
void accept_interposer_present(void* function);

// TCP sockets in LISTEN state this process has open now (for finding the one a library made).
std::vector<int> listening_tcp_fds();

}  // namespace lattice::net
