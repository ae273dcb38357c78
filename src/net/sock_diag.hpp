// The bytes of one NETLINK_SOCK_DIAG exchange that looks up a single TCP socket by its exact
// four-tuple (internal to net/; loopback_owner.cpp does the I/O). No syscalls here: the reply is
// untrusted bytes, and tests feed this decoder truncated, forged and mismatched replies.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::net {

// A TCP socket as the kernel's tables name it: `self` is its own end, `remote` the other one.
// IPv4 or IPv6; v4-mapped IPv6 addresses are looked up as IPv4 (the kernel does the same).
struct TcpSocketId {
  sockaddr_storage self;
  sockaddr_storage remote;
};

// What the kernel says about that socket.
struct DiagSocket {
  uint32_t uid;    // owner of the socket (its creator's fsuid), in our user namespace
  uint32_t inode;  // the socket's inode: 0 when no process holds it any more
  uint8_t state;   // TCP_ESTABLISHED, ...
};

// One SOCK_DIAG_BY_FAMILY request (inet_diag_req_v2, IPPROTO_TCP, every state, no cookie) for
// exactly `id`; an error for families other than IPv4/IPv6 or mixed families.
Result<std::string> encode_tcp_lookup(const TcpSocketId& id, uint32_t seq);

// The answer to that request. Every length is checked before it is read. Errors: the kernel's
// NLMSG_ERROR (ENOENT: "no such socket"), a reply to another request, a reply about another
// socket, and a socket no process holds (TIME_WAIT, orphaned, or a request sock: their uid
// would read 0, which must never pass for root).
Result<DiagSocket> decode_tcp_lookup(std::string_view reply, const TcpSocketId& id, uint32_t seq);

}  // namespace lattice::net
