// PMIx direct modex between agents (PmixModex): a node asks the rank's node for its data, as an
// rpc call; the response carries libpmix's blob for the rank (an error response: why none).
#pragma once

#include <string>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

struct ModexRequest {
  std::string launch_id;
  int rank = -1;
};

rpc::Outgoing modex_request(const ModexRequest& request);
ModexRequest decode_modex(schema::PmixModex::Reader m);
rpc::Outgoing modex_answer(const std::string& data);
// The blob from the rank's node's response, or why there is none.
Result<std::string> decode_modex_answer(const Result<schema::Envelope::Reader>& reply);

}  // namespace lattice::wire
