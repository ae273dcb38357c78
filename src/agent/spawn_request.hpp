// A rank's PMIx_Spawn as the request its node sends up (wire/spawn_codec.hpp). Pure.
#pragma once

#include <string>

#include "pmix/server.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::agent {

// argv[0] (PMIx's copy of the program) is dropped; variables the children could not take
// (reserved names: they describe the parent's wire-up, and an agent refuses a launch carrying
// them) and entries that are no NAME=VALUE are left out; hosts are the apps' PMIX_HOST lists
// together (the children are one launch), without repeats.
wire::SpawnRequest spawn_request(const std::string& launch_id, const pmix::SpawnCall& call);

}  // namespace lattice::agent
