// Cap'n Proto's canonical form of a struct (the encoding spec's "Canonicalization"): the bytes
// every holder of the same values gets, whatever segments, order or copies carried them. What
// launch signatures are made over (wire/launch_signature.hpp).
#pragma once

#include <capnp/message.h>

namespace lattice::rpc {

template <typename Reader>
kj::Array<capnp::word> canonical(Reader reader) {
  return capnp::canonicalize(reader);
}

}  // namespace lattice::rpc
