// Listening sockets: TCP for the launcher and peer agents, Unix for PMI and admin clients.
// Accepted connections come out as Streams; outgoing TCP connections are in connect.hpp.
// Destroying a listener stops accepting at once; no accept callback runs afterwards.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "base/log_limiter.hpp"
#include "base/result.hpp"
#include "base/strings.hpp"
#include "net/connect.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

using AcceptFn = std::function<void(std::unique_ptr<Stream>)>;

namespace detail {
// What both listeners share: the connection callback, which accepts into a fresh Stream, at
// most kAcceptsPerTurn in one turn of the loop. libuv accepts until the backlog is empty: a flood
// that reconnects as fast as the owner handles its connections would keep it there, and no timer,
// read or child's exit would run meanwhile.
class Acceptor {
 public:
  static constexpr int kAcceptsPerTurn = 64;

 protected:
  Acceptor(AcceptFn on_accept, bool tcp) : on_accept_(std::move(on_accept)), tcp_(tcp) {}
  // uv_listen with a SOMAXCONN backlog; `server->data` must point at this Acceptor.
  static int start_listening(uv_stream_s* server);

 private:
  static void on_connection(uv_stream_s* server, int status);
  void accept_one(uv_stream_s* server);
  AcceptFn on_accept_;
  bool tcp_;
  LogLimiter errors_;  // out of descriptors, a flood's accepts fail as fast as they come
  int accepted_this_turn_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for deferred work
};
}  // namespace detail

class TcpListener : private detail::Acceptor {
 public:
  using AcceptFn = net::AcceptFn;
  // `host` is a numeric IPv4/IPv6 address; port 0 lets the OS pick (see bound()). SO_REUSEADDR
  // (libuv sets it), backlog SOMAXCONN: with 128, 300 simultaneous connects lost 42.
  static Result<std::unique_ptr<TcpListener>> listen(Loop& loop, const std::string& host, int port,
                                                     AcceptFn on_accept);
  ~TcpListener();
  HostPort bound() const { return bound_; }

 private:
  explicit TcpListener(AcceptFn on_accept);
  std::unique_ptr<Handle<uv_tcp_s>> handle_;
  HostPort bound_;
};

class UnixListener : private detail::Acceptor {
 public:
  // Creates the socket file with mode 0600. A stale socket file (nobody answers) is replaced; a
  // live one, or a file that is not a socket, is an error. The file is removed when the
  // listener goes away (unless something else has replaced it meanwhile).
  static Result<std::unique_ptr<UnixListener>> listen(Loop& loop, const std::string& path,
                                                      AcceptFn on_accept);
  ~UnixListener();
  const std::string& path() const { return path_; }

 private:
  explicit UnixListener(AcceptFn on_accept);
  std::unique_ptr<Handle<uv_pipe_s>> handle_;
  std::string path_;  // set once the file is ours to remove
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace lattice::net
