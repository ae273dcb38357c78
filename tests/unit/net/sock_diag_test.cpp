// The sock_diag codec over hand-built bytes: the request's exact layout, and replies that are
// truncated, forged, about another socket, or about a socket no process holds.
#include "net/sock_diag.hpp"

#include <doctest/doctest.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "net/address.hpp"

namespace lattice::net {
namespace {

constexpr uint32_t kSeq = 7;

sockaddr_storage addr(const char* host, int port) {
  auto a = numeric_address(host, port);
  REQUIRE(a.ok());
  return *a;
}

// The client's socket 127.0.0.1:40000 -> 127.0.0.1:7400, seen from the client.
TcpSocketId client_v4() { return {addr("127.0.0.1", 40000), addr("127.0.0.1", 7400)}; }

template <class T>
std::string bytes_of(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

// One netlink message: header + payload, padded to 4 bytes like the kernel's.
std::string message(uint16_t type, const std::string& payload, uint32_t seq = kSeq) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_LENGTH(payload.size()));
  h.nlmsg_type = type;
  h.nlmsg_seq = seq;
  std::string out = bytes_of(h) + payload;
  out.resize(NLMSG_ALIGN(out.size()), '\0');
  return out;
}

// What the kernel says about an IPv4 socket (src = its own end).
inet_diag_msg diag_v4(const char* src, int sport, const char* dst, int dport, uint32_t uid,
                      uint32_t inode) {
  inet_diag_msg m{};
  m.idiag_family = AF_INET;
  m.idiag_state = TCP_ESTABLISHED;
  auto s = addr(src, sport), d = addr(dst, dport);
  m.id.idiag_src[0] = reinterpret_cast<sockaddr_in*>(&s)->sin_addr.s_addr;
  m.id.idiag_dst[0] = reinterpret_cast<sockaddr_in*>(&d)->sin_addr.s_addr;
  m.id.idiag_sport = htons(static_cast<uint16_t>(sport));
  m.id.idiag_dport = htons(static_cast<uint16_t>(dport));
  m.idiag_uid = uid;
  m.idiag_inode = inode;
  return m;
}

std::string good_reply() {
  return message(SOCK_DIAG_BY_FAMILY,
                 bytes_of(diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 1234, 99)));
}

std::string error_reply(int negative_errno) {
  nlmsgerr e{};
  e.error = negative_errno;
  return message(NLMSG_ERROR, bytes_of(e));
}

std::string decode_error(const std::string& reply) {
  auto r = decode_tcp_lookup(reply, client_v4(), kSeq);
  REQUIRE(!r.ok());
  return r.error().message;
}

TEST_CASE("encode_tcp_lookup: one exact IPv4 lookup, ends in network byte order, no cookie") {
  auto bytes = encode_tcp_lookup(client_v4(), kSeq);
  REQUIRE(bytes.ok());
  struct {
    nlmsghdr h;
    inet_diag_req_v2 r;
  } req{};
  REQUIRE(bytes->size() == sizeof req);
  std::memcpy(&req, bytes->data(), sizeof req);
  CHECK(req.h.nlmsg_len == sizeof req);
  CHECK(req.h.nlmsg_type == SOCK_DIAG_BY_FAMILY);
  CHECK(req.h.nlmsg_flags == NLM_F_REQUEST);
  CHECK(req.h.nlmsg_seq == kSeq);
  CHECK(req.r.sdiag_family == AF_INET);
  CHECK(req.r.sdiag_protocol == IPPROTO_TCP);
  CHECK(req.r.idiag_states == ~0u);
  CHECK(req.r.id.idiag_src[0] == htonl(0x7f000001));
  CHECK(req.r.id.idiag_dst[0] == htonl(0x7f000001));
  CHECK(req.r.id.idiag_sport == htons(40000));
  CHECK(req.r.id.idiag_dport == htons(7400));
  CHECK(req.r.id.idiag_cookie[0] == INET_DIAG_NOCOOKIE);
  CHECK(req.r.id.idiag_cookie[1] == INET_DIAG_NOCOOKIE);
}

TEST_CASE("encode_tcp_lookup: IPv6, v4-mapped looked up as IPv4, mixed families refused") {
  auto v6 = encode_tcp_lookup({addr("::1", 1), addr("::1", 2)}, kSeq);
  REQUIRE(v6.ok());
  inet_diag_req_v2 r{};
  std::memcpy(&r, v6->data() + sizeof(nlmsghdr), sizeof r);
  CHECK(r.sdiag_family == AF_INET6);
  CHECK(r.id.idiag_src[3] == htonl(1));

  auto mapped = encode_tcp_lookup({addr("::ffff:127.0.0.1", 1), addr("127.0.0.1", 2)}, kSeq);
  REQUIRE(mapped.ok());
  std::memcpy(&r, mapped->data() + sizeof(nlmsghdr), sizeof r);
  CHECK(r.sdiag_family == AF_INET);
  CHECK(r.id.idiag_src[0] == htonl(0x7f000001));

  CHECK(!encode_tcp_lookup({addr("::1", 1), addr("127.0.0.1", 2)}, kSeq).ok());
  CHECK(!encode_tcp_lookup({sockaddr_storage{}, sockaddr_storage{}}, kSeq).ok());
}

TEST_CASE("decode_tcp_lookup: the owner of the socket asked about") {
  auto r = decode_tcp_lookup(good_reply(), client_v4(), kSeq);
  REQUIRE(r.ok());
  CHECK(r->uid == 1234);
  CHECK(r->inode == 99);
  CHECK(r->state == TCP_ESTABLISHED);

  // Trailing attributes (the kernel adds a few) are ignored; so are a NOOP and an ack first.
  std::string with_attributes = message(
      SOCK_DIAG_BY_FAMILY,
      bytes_of(diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 1234, 99)) + std::string(12, '\x01'));
  CHECK(decode_tcp_lookup(with_attributes, client_v4(), kSeq).ok());
  CHECK(
      decode_tcp_lookup(message(NLMSG_NOOP, "") + error_reply(0) + good_reply(), client_v4(), kSeq)
          .ok());
}

TEST_CASE("decode_tcp_lookup: an IPv6 answer with v4-mapped addresses matches an IPv4 lookup") {
  inet_diag_msg m = diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 42, 5);
  m.idiag_family = AF_INET6;
  auto s = addr("::ffff:127.0.0.1", 0);
  std::memcpy(m.id.idiag_src, &reinterpret_cast<sockaddr_in6*>(&s)->sin6_addr, 16);
  std::memcpy(m.id.idiag_dst, &reinterpret_cast<sockaddr_in6*>(&s)->sin6_addr, 16);
  auto r = decode_tcp_lookup(message(SOCK_DIAG_BY_FAMILY, bytes_of(m)), client_v4(), kSeq);
  REQUIRE(r.ok());
  CHECK(r->uid == 42);
}

TEST_CASE("decode_tcp_lookup: the kernel's errors") {
  CHECK(decode_error(error_reply(-ENOENT)).find("no such socket") != std::string::npos);
  CHECK(decode_error(error_reply(-EPERM)).find(std::strerror(EPERM)) != std::string::npos);
  CHECK(decode_error(error_reply(INT32_MIN)).find("error code") != std::string::npos);
  CHECK(decode_error(message(NLMSG_DONE, std::string(4, '\0'))).find("no such socket") !=
        std::string::npos);
  CHECK(decode_error(error_reply(0)).find("no answer") != std::string::npos);  // a bare ack
}

TEST_CASE("decode_tcp_lookup: answers about something else are refused") {
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY,
                             bytes_of(diag_v4("127.0.0.1", 40001, "127.0.0.1", 7400, 1, 9))))
            .find("another socket") != std::string::npos);
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY,
                             bytes_of(diag_v4("127.0.0.2", 40000, "127.0.0.1", 7400, 1, 9))))
            .find("another socket") != std::string::npos);
  // Source and destination swapped: the server's own socket, not the client's.
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY,
                             bytes_of(diag_v4("127.0.0.1", 7400, "127.0.0.1", 40000, 1, 9))))
            .find("another socket") != std::string::npos);
  inet_diag_msg odd = diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 1, 9);
  odd.idiag_family = AF_UNIX;
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY, bytes_of(odd))).find("another socket") !=
        std::string::npos);
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY,
                             bytes_of(diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 1, 9)),
                             kSeq + 1))
            .find("another request") != std::string::npos);
  CHECK(decode_error(message(0x77, "")).find("unexpected message type") != std::string::npos);
}

TEST_CASE("decode_tcp_lookup: a socket no process holds reads uid 0 and is refused") {
  inet_diag_msg tw = diag_v4("127.0.0.1", 40000, "127.0.0.1", 7400, 0, 0);
  tw.idiag_state = TCP_TIME_WAIT;
  std::string why = decode_error(message(SOCK_DIAG_BY_FAMILY, bytes_of(tw)));
  CHECK(why.find("no process holds") != std::string::npos);
  CHECK(why.find("state 6") != std::string::npos);
}

TEST_CASE("decode_tcp_lookup: every truncation and every bad length is an error") {
  const std::string full = good_reply();
  for (size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    CHECK(!decode_tcp_lookup(std::string_view(full).substr(0, n), client_v4(), kSeq).ok());
  }
  for (uint32_t len : {0u, 1u, 15u, static_cast<uint32_t>(full.size() + 1), 0xffffffffu}) {
    CAPTURE(len);
    std::string bad = full;
    std::memcpy(bad.data(), &len, sizeof len);
    CHECK(!decode_tcp_lookup(bad, client_v4(), kSeq).ok());
  }
  // A payload shorter than inet_diag_msg, correctly framed.
  CHECK(decode_error(message(SOCK_DIAG_BY_FAMILY, std::string(10, '\0'))).find("short") !=
        std::string::npos);
  CHECK(decode_error(message(NLMSG_ERROR, "ab")).find("short") != std::string::npos);
}

}  // namespace
}  // namespace lattice::net
