// Address conversions through libuv's portable inet helpers.
#include "net/address.hpp"

#include <uv.h>

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

}  // namespace lattice::net
