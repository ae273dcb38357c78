// socketpair for ranks' PMI_FD and agents' ready fd.
#include "net/fd.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/strings.hpp"

namespace lattice::net {

Result<std::pair<UniqueFd, UniqueFd>> make_socketpair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return make_error(cat("socketpair: ", std::strerror(errno)));
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

}  // namespace lattice::net
