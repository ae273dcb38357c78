// Which local user is at the other end of a TCP connection from this host: the kernel's sock_diag
// tables name the owner of the client's socket. Caveat: that is the uid that created the socket,
// even if the fd was handed to another process since; and it blocks for one netlink round trip.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.hpp"
#include "net/stream.hpp"

namespace lattice::net {

// For a Stream accepted from a TcpListener on 127.0.0.1/::1 (or any loopback address, v4-mapped
// included). Errors name the reason: "not a TCP connection", "not a loopback connection",
// netlink refused or failing, the peer's socket already gone.
Result<uid_t> loopback_peer_uid(const Stream& accepted);
// The same for an accepted socket's fd.
Result<uid_t> loopback_peer_uid(int accepted_fd);

// Where an accepted TCP connection comes from, for counting connections per source.
struct PeerOrigin {
  std::string address;  // the client's IP address without its port; v4-mapped as plain IPv4
  // The owner of the client's socket when the client is on this host: its address is a loopback
  // one (any of 127/8, which every local user may bind) or the very address it connected to.
  // Unset for other clients, and when the kernel could not say (the client is already gone).
  std::optional<uid_t> local_uid;
};
Result<PeerOrigin> peer_origin(const Stream& accepted);

}  // namespace lattice::net
