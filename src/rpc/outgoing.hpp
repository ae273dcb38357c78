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
  // `first_segment_words`: room for the whole message, when the caller knows its size, makes it
  // travel as one segment. A reader reaches a later segment through a mutex-guarded lookup for
  // every pointer it follows there (capnp's ReaderArena): per key, for a fence store.
  explicit Outgoing(unsigned first_segment_words = capnp::SUGGESTED_FIRST_SEGMENT_WORDS);
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
