#include "launcher/local_socket.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.hpp"

namespace lattice::launcher {

Result<net::UniqueFd> connect_local(const std::string& path, const std::string& what,
                                    std::optional<uid_t> trusted_uid) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return make_error(cat(what, ": socket path '", path, "' is empty or too long"));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  net::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return make_error(cat("cannot reach ", what, " at ", path, ": ", std::strerror(errno)));
  if (trusted_uid) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
      return make_error(
          cat(what, " at ", path, ": cannot tell who listens: ", std::strerror(errno)));
    if (cred.uid != 0 && cred.uid != *trusted_uid)
      return make_error(cat(what, " at ", path, " is served by uid ", cred.uid,
                            ", not by an agent (root or uid ", *trusted_uid, ")"));
  }
  return fd;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void SocketTransport::close() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace lattice::launcher
