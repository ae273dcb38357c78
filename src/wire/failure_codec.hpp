// A policy::Failure to and from the schema's Failure, for both sides of the wire (aborts go
// both ways, LaunchEnded carries one): one codec, so the two sides cannot drift apart.
#pragma once

#include "lattice.capnp.h"
#include "policy/failure.hpp"

namespace lattice::wire {

void encode_failure(const policy::Failure& failure, schema::Failure::Builder out);
policy::Failure decode_failure(schema::Failure::Reader in);

}  // namespace lattice::wire
