// The seam between a Session and the bytes underneath it: net streams now, libsodium-sealed
// streams later. The session never reads; its owner feeds it through Session::receive().
#pragma once

#include <string>

namespace lattice::rpc {

class ByteTransport {
 public:
  virtual ~ByteTransport() = default;
  // Queue bytes to the peer. It may call back into the session before returning (a loopback
  // peer's receive() is deferred while the session dispatches; fail_all() is always safe).
  virtual void write(std::string bytes) = 0;
  // Close the connection; idempotent.
  virtual void close() = 0;
};

}  // namespace lattice::rpc
