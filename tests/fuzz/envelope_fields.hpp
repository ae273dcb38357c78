// Reads every field of an Envelope the way the agent and the launcher do (typed getters, texts
// copied out, lists walked), then once more through capnp's dynamic reflection so that fields
// added to schema/lattice.capnp later are read too. Throws what capnp's readers throw.
#pragma once

#include <cstddef>

#include "lattice.capnp.h"

namespace lattice::fuzz {

// A value derived from everything read (so no read can be optimised away).
size_t read_every_field(schema::Envelope::Reader envelope);

}  // namespace lattice::fuzz
