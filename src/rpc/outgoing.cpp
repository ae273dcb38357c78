// Outgoing: the root is initialised once here, so envelope() is a cheap getRoot afterwards and
// a message nobody filled in is a valid Envelope whose body is `none`, stamped with our version.
#include "rpc/outgoing.hpp"

#include "base/wipe.hpp"
#include "rpc/version.hpp"

namespace lattice::rpc {

Outgoing::Outgoing(unsigned first_segment_words)
    : message_(std::make_unique<capnp::MallocMessageBuilder>(first_segment_words)) {
  message_->initRoot<schema::Envelope>().setVersion(kProtocolVersion);
}

Outgoing::~Outgoing() {
  if (!secret_ || !message_) return;
  for (auto segment : message_->getSegmentsForOutput())
    wipe_bytes(const_cast<capnp::word*>(segment.begin()), segment.size() * sizeof(capnp::word));
}

schema::Envelope::Builder Outgoing::envelope() { return message_->getRoot<schema::Envelope>(); }

}  // namespace lattice::rpc
