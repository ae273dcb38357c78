// One message under construction: an Envelope in its own arena. The session fills in requestId
// and isResponse when it sends, so call sites only build the body:
//   rpc::Outgoing msg; msg.body().initHeartbeat(); session.notify(std::move(msg));
#pragma once

#include <capnp/message.h>

#include <memory>

#include "lattice.capnp.h"

namespace lattice::rpc {

class Outgoing {
 public:
  Outgoing();
  Outgoing(Outgoing&&) noexcept = default;
  Outgoing& operator=(Outgoing&&) noexcept = default;

  schema::Envelope::Builder envelope();
  schema::Envelope::Body::Builder body() { return envelope().getBody(); }
  capnp::MessageBuilder& message() { return *message_; }
  // The message holds a secret (a CXI key): its arena is wiped when the message goes away.
  void mark_secret() { secret_ = true; }
  ~Outgoing();

 private:
  // Behind a pointer because capnp's builders cannot move; Outgoing must, to be handed over.
  std::unique_ptr<capnp::MallocMessageBuilder> message_;
  bool secret_ = false;
};

}  // namespace lattice::rpc
