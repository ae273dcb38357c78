// Encoding and checking of the inet_diag single-socket lookup. Fields are copied out of the
// reply with memcpy after a length check, never read in place: a short, odd or forged reply can
// produce an error, never a read past the bytes that arrived.
#include "net/sock_diag.hpp"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

#include "base/strings.hpp"
#include "net/address.hpp"

namespace lattice::net {
namespace {

struct Request {
  nlmsghdr header;
  inet_diag_req_v2 body;
};
static_assert(sizeof(Request) == NLMSG_LENGTH(sizeof(inet_diag_req_v2)), "no padding expected");

// One end of the socket into the kernel's (address, port) fields; both in network byte order.
void put_end(const sockaddr_storage& end, __be32 (&addr)[4], __be16& port) {
  if (end.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&end);
    addr[0] = in->sin_addr.s_addr;
    port = in->sin_port;
  } else {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&end);
    std::memcpy(addr, &in6->sin6_addr, sizeof in6->sin6_addr);
    port = in6->sin6_port;
  }
}

// The reverse, for comparing what the kernel answered about with what we asked about.
sockaddr_storage end_of(uint8_t family, const __be32 (&addr)[4], __be16 port) {
  sockaddr_storage end{};
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&end);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = addr[0];
    in->sin_port = port;
  } else if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&end);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, addr, sizeof in6->sin6_addr);
    in6->sin6_port = port;
  }
  return end;  // AF_UNSPEC otherwise: matches nothing
}

std::string errno_text(int negative_errno) {
  if (negative_errno < 0 && negative_errno > -4096) return std::strerror(-negative_errno);
  return cat("error code ", negative_errno);
}

Result<DiagSocket> check_socket(std::string_view payload, const TcpSocketId& id) {
  inet_diag_msg msg{};
  if (payload.size() < sizeof msg)
    return make_error(
        cat("sock_diag: short reply (", payload.size(), " bytes, need ", sizeof msg, ")"));
  std::memcpy(&msg, payload.data(), sizeof msg);
  if (!same_endpoint(end_of(msg.idiag_family, msg.id.idiag_src, msg.id.idiag_sport), id.self) ||
      !same_endpoint(end_of(msg.idiag_family, msg.id.idiag_dst, msg.id.idiag_dport), id.remote))
    return make_error("sock_diag: the reply is about another socket");
  // TIME_WAIT and request socks, and sockets whose process closed them, report uid 0.
  if (msg.idiag_inode == 0)
    return make_error(cat("sock_diag: no process holds the peer's socket any more (TCP state ",
                          static_cast<int>(msg.idiag_state), ")"));
  return DiagSocket{msg.idiag_uid, msg.idiag_inode, msg.idiag_state};
}

}  // namespace

Result<std::string> encode_tcp_lookup(const TcpSocketId& id, uint32_t seq) {
  sockaddr_storage self = unmapped(id.self), remote = unmapped(id.remote);
  if (self.ss_family != remote.ss_family ||
      (self.ss_family != AF_INET && self.ss_family != AF_INET6))
    return make_error("sock_diag: the socket's ends are not both IPv4 or both IPv6");
  Request r{};
  r.header.nlmsg_len = sizeof r;
  r.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  r.header.nlmsg_flags = NLM_F_REQUEST;  // no NLM_F_DUMP: an exact lookup of one socket
  r.header.nlmsg_seq = seq;
  r.body.sdiag_family = static_cast<uint8_t>(self.ss_family);
  r.body.sdiag_protocol = IPPROTO_TCP;
  r.body.idiag_states = ~0u;
  put_end(self, r.body.id.idiag_src, r.body.id.idiag_sport);
  put_end(remote, r.body.id.idiag_dst, r.body.id.idiag_dport);
  // Any other cookie must equal the socket's own, or the kernel answers ESTALE/ENOENT.
  r.body.id.idiag_cookie[0] = r.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  return std::string(reinterpret_cast<const char*>(&r), sizeof r);
}

Result<DiagSocket> decode_tcp_lookup(std::string_view reply, const TcpSocketId& id, uint32_t seq) {
  size_t offset = 0;
  while (reply.size() - offset >= sizeof(nlmsghdr)) {
    nlmsghdr header{};
    std::memcpy(&header, reply.data() + offset, sizeof header);
    size_t left = reply.size() - offset;
    if (header.nlmsg_len < sizeof header || header.nlmsg_len > left)
      return make_error(cat("sock_diag: malformed reply (a message of ", header.nlmsg_len,
                            " bytes where ", left, " are left)"));
    if (header.nlmsg_seq != seq)
      return make_error(cat("sock_diag: a reply to another request (sequence ", header.nlmsg_seq,
                            ", expected ", seq, ")"));
    std::string_view payload =
        reply.substr(offset + sizeof header, header.nlmsg_len - sizeof header);
    switch (header.nlmsg_type) {
      case NLMSG_ERROR: {
        int error = 0;  // nlmsgerr.error: 0 is an acknowledgement, else a negative errno
        if (payload.size() < sizeof error) return make_error("sock_diag: short error message");
        std::memcpy(&error, payload.data(), sizeof error);
        if (error == -ENOENT) return make_error("sock_diag: no such socket (closed already?)");
        if (error != 0) return make_error(cat("sock_diag: ", errno_text(error)));
        break;
      }
      case NLMSG_DONE:
        return make_error("sock_diag: no such socket (closed already?)");
      case NLMSG_NOOP:
        break;
      case SOCK_DIAG_BY_FAMILY:
        return check_socket(payload, id);
      default:
        return make_error(cat("sock_diag: unexpected message type ", header.nlmsg_type));
    }
    offset += NLMSG_ALIGN(header.nlmsg_len);
    if (offset > reply.size()) break;  // padding past the end: nothing more to read
  }
  return make_error(cat("sock_diag: no answer in a reply of ", reply.size(), " bytes"));
}

}  // namespace lattice::net
