// Socket address helpers shared by listeners and connect_tcp (internal to net/): numeric
// parsing without DNS, and the printable "host:port" / "[v6]:port" forms used in logs.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "base/result.hpp"
#include "base/strings.hpp"

namespace lattice::net {

// A numeric IPv4 or IPv6 address (no name lookup); an error for anything else.
Result<sockaddr_storage> numeric_address(const std::string& host, int port);
// Host without brackets and port; {"?", 0} for families other than IPv4/IPv6.
HostPort host_port_of(const sockaddr_storage& addr);
// "127.0.0.1:5555", "[::1]:5555".
std::string address_text(const sockaddr_storage& addr);
// Sets the port of an IPv4/IPv6 address (name lookups return port 0).
void set_port(sockaddr_storage& addr, int port);

// ::ffff:a.b.c.d (how a dual-stack socket names an IPv4 peer) as the plain IPv4 address, port
// kept; any other address unchanged.
sockaddr_storage unmapped(const sockaddr_storage& addr);
// 127.0.0.0/8 or ::1, mapped or not.
bool is_loopback(const sockaddr_storage& addr);
// Same address (ports aside) once both are unmapped; false for families other than IPv4/IPv6.
bool same_address(const sockaddr_storage& a, const sockaddr_storage& b);
// Same address and port once both are unmapped; false for families other than IPv4/IPv6.
bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b);

}  // namespace lattice::net
