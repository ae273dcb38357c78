// An rpc::Session carried by a net::Stream: the one place where the rpc layer meets libuv, used
// by the agent (launcher and peer connections) and the launcher alike. The session sees only the
// ByteTransport seam, so a sealed (libsodium) transport can slide in underneath later.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/stream.hpp"
#include "rpc/session.hpp"

namespace lattice::link {

class Connection : public rpc::ByteTransport {
 public:
  using ClosedFn = std::function<void(const std::string& reason)>;

  // `on_closed` runs once, when the stream ends or the session rejects the peer's bytes; pending
  // calls have failed by then. It may not destroy this Connection synchronously (defer it).
  Connection(std::unique_ptr<net::Stream> stream, rpc::Session::Handlers handlers,
             ClosedFn on_closed);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  rpc::Session& session() { return session_; }
  bool open() const { return open_; }
  const std::string& peer() const { return peer_; }

  void write(std::string bytes) override;
  void close() override;

 private:
  void closed(const std::string& reason);

  std::unique_ptr<net::Stream> stream_;
  std::string peer_;
  ClosedFn on_closed_;
  bool open_ = true;
  bool reported_ = false;
  rpc::Session session_;
};

}  // namespace lattice::link
