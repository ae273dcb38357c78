// PMIx direct modex between agents (PmixModex): a node asks the rank's node for its data, and
// that node answers.
#pragma once

#include <cstdint>
#include <string>

#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// A question (rank's data, please) or its answer.
struct ModexMessage {
  std::string launch_id;
  int rank = -1;
  uint64_t tag = 0;  // the asker's
  bool is_answer = false;
  std::string data;
  std::string error;
};

rpc::Outgoing modex_message(const ModexMessage& message);
ModexMessage decode_modex(schema::PmixModex::Reader m);

}  // namespace lattice::wire
