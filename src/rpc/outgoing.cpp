// Outgoing: the root is initialised once here, so envelope() is a cheap getRoot afterwards and
// a message nobody filled in is a valid Envelope whose body is `none`.
#include "rpc/outgoing.hpp"

namespace lattice::rpc {

Outgoing::Outgoing() : message_(std::make_unique<capnp::MallocMessageBuilder>()) {
  message_->initRoot<schema::Envelope>();
}

schema::Envelope::Builder Outgoing::envelope() { return message_->getRoot<schema::Envelope>(); }

}  // namespace lattice::rpc
