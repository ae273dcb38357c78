// A policy::Failure to and from the schema's Failure, and the AbortProcesses that carries one,
// for both sides of the wire (the launcher and agents send aborts, agents read them;
// LaunchEnded carries a failure too): one codec, so the two sides cannot drift apart.
#pragma once

#include <string>

#include "lattice.capnp.h"
#include "policy/failure.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

void encode_failure(const policy::Failure& failure, schema::Failure::Builder out);
policy::Failure decode_failure(schema::Failure::Reader in);

rpc::Outgoing abort_message(const std::string& launch_id, const policy::Failure& failure);
policy::Failure decode_abort(schema::AbortProcesses::Reader in);

}  // namespace lattice::wire
