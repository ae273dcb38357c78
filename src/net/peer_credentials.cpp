// peer_credentials: getsockopt(SO_PEERCRED) on the stream's fd. SO_DOMAIN is checked first
// because a TCP socket answers SO_PEERCRED too, with uid and gid -1, rather than failing.
#include "net/peer_credentials.hpp"

#include <sys/socket.h>

namespace lattice::net {

std::optional<PeerCredentials> peer_credentials(const Stream& stream) {
  int fd = stream.fd();
  if (fd < 0) return std::nullopt;
  int domain = 0;
  socklen_t len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
    return std::nullopt;  // ENOTSOCK for a pipe
  ucred cred{};
  len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred)
    return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

}  // namespace lattice::net
