// Outgoing TCP connections. The completion always runs from the loop, never inside
// connect_tcp() itself; it is dropped (not run) when the Loop is destroyed first.
// Caveat: there is no cancel. An owner that may go away before the completion must guard its
// callback (e.g. capture a weak_ptr) rather than capture a bare `this`.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"

namespace lattice::net {

using ConnectFn = std::function<void(Result<std::unique_ptr<Stream>>)>;

// Numeric IPv4/IPv6 hosts connect at once; names are resolved first (uv_getaddrinfo, first
// address). Errors read "connect to HOST:PORT: <reason>".
void connect_tcp(Loop& loop, const std::string& host, int port, ConnectFn done);

}  // namespace lattice::net
