// accept(2) for the whole of lattice-agentd, exported (meson.build: --export-dynamic-symbol) so
// that libraries loaded later bind to it before libc's: on a listener the agent has taken over
// (accept_handoff.hpp: libpmix's) it returns only connections the agent vetted; on any other
// socket it is the kernel's accept. Linked into the agent's executable only.
#include <sys/socket.h>

#include "net/accept_handoff.hpp"

extern "C" int accept(int fd, sockaddr* addr, socklen_t* addrlen) {
  int result = -1;
  if (lattice::net::handoff_accept(fd, addr, addrlen, &result)) return result;
  return ::accept4(fd, addr, addrlen, 0);
}

namespace {
// Tells the hand-off that this accept() is in the process, so it can refuse to take a
// listener over where it is not (a binary built without this file).
const bool kRegistered =
    (lattice::net::accept_interposer_present(reinterpret_cast<void*>(&accept)), true);
}  // namespace
