// Listening sockets (TCP for launcher and peer agents, Unix for PMI and admin clients) and
// outgoing TCP connections. Accepted and connected sockets come out as Streams.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "base/strings.hpp"
#include "net/handle.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"

namespace lattice::net {

using AcceptFn = std::function<void(std::unique_ptr<Stream>)>;

class TcpListener {
 public:
  using AcceptFn = net::AcceptFn;
  // Port 0: the OS picks (see bound()). Backlog SOMAXCONN (128 lost connects at 300 at once).
  static Result<std::unique_ptr<TcpListener>> listen(Loop& loop, const std::string& host, int port,
                                                      AcceptFn on_accept);
  HostPort bound() const { return bound_; }

 private:
  TcpListener(Loop& loop, AcceptFn on_accept);
  Loop& loop_;
  AcceptFn on_accept_;
  Handle<uv_tcp_t> handle_;
  HostPort bound_;
};

class UnixListener {
 public:
  // Creates the socket with mode 0600. A stale socket file (nobody answers) is replaced; a live
  // one is an error. The file is removed when the listener goes away.
  static Result<std::unique_ptr<UnixListener>> listen(Loop& loop, const std::string& path,
                                                       AcceptFn on_accept);
  ~UnixListener();
  const std::string& path() const { return path_; }

 private:
  UnixListener(Loop& loop, std::string path, AcceptFn on_accept);
  Loop& loop_;
  std::string path_;
  AcceptFn on_accept_;
  Handle<uv_pipe_t> handle_;
};

// Numeric IPv4/IPv6 addresses connect at once; names are resolved first (uv_getaddrinfo).
void connect_tcp(Loop& loop, const std::string& host, int port,
                 std::function<void(Result<std::unique_ptr<Stream>>)> done);

}  // namespace lattice::net
