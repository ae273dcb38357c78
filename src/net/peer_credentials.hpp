// Who is at the other end of a Unix-socket Stream, as the kernel recorded it (SO_PEERCRED).
// Caveat: the credentials are those of the process that called connect() (or socketpair()) at
// that moment; a later setuid, exec or fd hand-over does not change them.
#pragma once

#include <sys/types.h>

#include <optional>

#include "net/stream.hpp"

namespace lattice::net {

struct PeerCredentials {
  pid_t pid;  // 0 when the peer lives in a pid namespace we cannot see into
  uid_t uid;  // effective ids, as the kernel maps them into our user namespace
  gid_t gid;
};

// Nullopt for a stream that is not a Unix socket (TCP, a pipe), a closed one, or a failed call.
std::optional<PeerCredentials> peer_credentials(const Stream& stream);

}  // namespace lattice::net
