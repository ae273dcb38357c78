// loopback_peer_uid, peer_origin: the accepted socket's two addresses give the client's socket id
// (its own end is our remote end); one synchronous NETLINK_SOCK_DIAG request asks the kernel for
// it. The kernel answers within sendto(); the poll timeout only bounds a kernel that does not.
#include "net/loopback_owner.hpp"

#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "net/address.hpp"
#include "net/fd.hpp"
#include "net/sock_diag.hpp"

namespace lattice::net {
namespace {

// A one-socket answer is an inet_diag_msg and a few attributes (well under 1 KiB); anything
// that does not fit is refused rather than read in part.
constexpr size_t kReplyBytes = 8 * 1024;
// The kernel replies before sendto() returns; this only bounds a wait that should not happen.
constexpr int kReplyTimeoutMs = 1000;
// One request per fresh netlink socket: a fixed sequence number suffices.
constexpr uint32_t kSeq = 1;

std::string sys_error(const char* call) { return cat(call, ": ", std::strerror(errno)); }

// Sends one request to the kernel and returns the one datagram it answers with.
Result<std::string> ask_kernel(const std::string& request) {
  UniqueFd nl(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!nl) return make_error(cat("netlink sock_diag: ", sys_error("socket")));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;  // nl_pid 0: the kernel
  ssize_t sent;
  do {
    sent = ::sendto(nl.get(), request.data(), request.size(), 0,
                    reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(request.size()))
    return make_error(cat("netlink sock_diag: ", sent < 0 ? sys_error("sendto") : "short send"));

  pollfd p{nl.get(), POLLIN, 0};
  int ready;
  do ready = ::poll(&p, 1, kReplyTimeoutMs);
  while (ready < 0 && errno == EINTR);
  if (ready < 0) return make_error(cat("netlink sock_diag: ", sys_error("poll")));
  if (ready == 0) return make_error("netlink sock_diag: no reply from the kernel");

  std::string reply(kReplyBytes, '\0');
  sockaddr_nl from{};
  iovec iov{reply.data(), reply.size()};
  msghdr msg{};
  msg.msg_name = &from;
  msg.msg_namelen = sizeof from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  ssize_t got;
  do got = ::recvmsg(nl.get(), &msg, MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  if (got < 0) return make_error(cat("netlink sock_diag: ", sys_error("recvmsg")));
  if (msg.msg_flags & MSG_TRUNC)
    return make_error(cat("netlink sock_diag: reply larger than ", kReplyBytes, " bytes"));
  if (msg.msg_namelen != sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0)
    return make_error("netlink sock_diag: a reply that is not from the kernel");
  reply.resize(static_cast<size_t>(got));
  return reply;
}

Result<sockaddr_storage> address_of(int fd, bool peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                : ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (rc != 0) return make_error(sys_error(peer ? "getpeername" : "getsockname"));
  return unmapped(ss);
}

Status is_tcp(int fd) {
  int protocol = 0;
  socklen_t len = sizeof protocol;
  if (::getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0) {
    if (errno == ENOTSOCK) return make_error("not a TCP connection");
    return make_error(sys_error("getsockopt(SO_PROTOCOL)"));
  }
  int domain = 0;
  len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0)
    return make_error(sys_error("getsockopt(SO_DOMAIN)"));
  if (protocol != IPPROTO_TCP || (domain != AF_INET && domain != AF_INET6))
    return make_error("not a TCP connection");
  return {};
}

// The owner of the client's socket of an accepted connection whose two ends are `remote` and
// `local` (as this side sees them).
Result<uid_t> owner_of_client(const sockaddr_storage& remote, const sockaddr_storage& local) {
  TcpSocketId client{remote, local};  // the client's socket, seen from its own side
  auto request = encode_tcp_lookup(client, kSeq);
  if (!request) return request.error();
  auto reply = ask_kernel(*request);
  if (!reply) return reply.error();
  auto socket = decode_tcp_lookup(*reply, client, kSeq);
  if (!socket) return socket.error();
  return static_cast<uid_t>(socket->uid);
}

struct Ends {
  sockaddr_storage local, remote;
};

Result<Ends> tcp_ends(int fd) {
  if (auto tcp = is_tcp(fd); !tcp) return tcp.error();
  auto local = address_of(fd, false);
  if (!local) return local.error();
  auto remote = address_of(fd, true);
  if (!remote) return remote.error();
  return Ends{*local, *remote};
}

Result<uid_t> owner_of_peer(int fd) {
  auto ends = tcp_ends(fd);
  if (!ends) return ends.error();
  if (!is_loopback(ends->remote) || !is_loopback(ends->local))
    return make_error(cat("not a loopback connection (peer ", address_text(ends->remote), ")"));
  return owner_of_client(ends->remote, ends->local);
}

}  // namespace

Result<uid_t> loopback_peer_uid(int accepted_fd) { return owner_of_peer(accepted_fd); }

Result<uid_t> loopback_peer_uid(const Stream& accepted) {
  int fd = accepted.fd();
  if (fd < 0) return make_error(cat("owner of ", accepted.peer(), ": the stream is closed"));
  auto uid = owner_of_peer(fd);
  if (!uid) return make_error(cat("owner of ", accepted.peer(), ": ", uid.error().message));
  return uid;
}

Result<PeerOrigin> peer_origin(const Stream& accepted) {
  int fd = accepted.fd();
  if (fd < 0) return make_error(cat("origin of ", accepted.peer(), ": the stream is closed"));
  auto ends = tcp_ends(fd);
  if (!ends) return make_error(cat("origin of ", accepted.peer(), ": ", ends.error().message));
  PeerOrigin origin;
  origin.address = host_port_of(ends->remote).host;
  if (is_loopback(ends->remote) || same_address(ends->remote, ends->local)) {
    auto uid = owner_of_client(ends->remote, ends->local);
    if (uid)
      origin.local_uid = *uid;
    else
      LAT_LOG(debug, "net", "owner of ", accepted.peer(), ": ", uid.error().message);
  }
  return origin;
}

}  // namespace lattice::net
