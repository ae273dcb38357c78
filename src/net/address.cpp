// Address conversions through libuv's portable inet helpers.
#include "net/address.hpp"

#include <uv.h>

#include <cstring>

namespace lattice::net {

Result<sockaddr_storage> numeric_address(const std::string& host, int port) {
  sockaddr_storage ss{};
  if (port < 0 || port > 65535) return make_error(cat("port ", port, " is out of range"));
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&ss)) == 0) return ss;
  if (uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&ss)) == 0) return ss;
  return make_error(cat("'", host, "' is not a numeric IP address"));
}

HostPort host_port_of(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    uv_ip4_name(in, host, sizeof host);
    return HostPort{host, ntohs(in->sin_port)};
  }
  if (addr.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uv_ip6_name(in6, host, sizeof host);
    return HostPort{host, ntohs(in6->sin6_port)};
  }
  return HostPort{host, 0};
}

std::string address_text(const sockaddr_storage& addr) {
  HostPort hp = host_port_of(addr);
  if (addr.ss_family == AF_INET6) return cat('[', hp.host, "]:", hp.port);
  return cat(hp.host, ':', hp.port);
}

void set_port(sockaddr_storage& addr, int port) {
  auto net_port = htons(static_cast<uint16_t>(port));
  if (addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&addr)->sin_port = net_port;
  if (addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = net_port;
}

sockaddr_storage unmapped(const sockaddr_storage& addr) {
  if (addr.ss_family != AF_INET6) return addr;
  auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
  if (!IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return addr;
  sockaddr_storage out{};
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = in6->sin6_port;
  std::memcpy(&in->sin_addr, &in6->sin6_addr.s6_addr[12], 4);
  return out;
}

bool is_loopback(const sockaddr_storage& addr) {
  sockaddr_storage plain = unmapped(addr);
  if (plain.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&plain)->sin_addr.s_addr) >> 24) == 127;
  if (plain.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&plain)->sin6_addr);
  return false;
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  sockaddr_storage x = unmapped(a), y = unmapped(b);
  if (x.ss_family != y.ss_family) return false;
  if (x.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&x)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&y)->sin_addr.s_addr;
  if (x.ss_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&x)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&y)->sin6_addr,
                       sizeof(in6_addr)) == 0;
  return false;
}

bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b) {
  auto port = [](const sockaddr_storage& addr) {
    sockaddr_storage plain = unmapped(addr);
    if (plain.ss_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(&plain)->sin_port;
    return reinterpret_cast<const sockaddr_in6*>(&plain)->sin6_port;
  };
  return same_address(a, b) && port(a) == port(b);
}

}  // namespace lattice::net
