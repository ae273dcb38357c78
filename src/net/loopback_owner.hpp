// Which local user is at the other end of a loopback TCP connection: the kernel's sock_diag
// tables name the owner of the client's socket. Caveat: that is the uid that created the socket,
// even if the fd was handed to another process since; and it blocks for one netlink round trip.
#pragma once

#include <sys/types.h>

#include "base/result.hpp"
#include "net/stream.hpp"

namespace lattice::net {

// For a Stream accepted from a TcpListener on 127.0.0.1/::1 (or any loopback address, v4-mapped
// included). Errors name the reason: "not a TCP connection", "not a loopback connection",
// netlink refused or failing, the peer's socket already gone.
Result<uid_t> loopback_peer_uid(const Stream& accepted);
// The same for an accepted socket's fd.
Result<uid_t> loopback_peer_uid(int accepted_fd);

}  // namespace lattice::net
