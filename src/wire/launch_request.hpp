// The launch request (LaunchProcessesRequest): the launcher's to each agent, or in a relayed
// launch each agent's to its children.
#pragma once

#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// The request for a child in a relayed launch: the one this node got, addressed to node
// `node_index`.
rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index);

}  // namespace lattice::wire
