// PMIx_Spawn between agents and the launcher (PmixSpawn): a rank's node asks the launch's head,
// the head asks the launcher, and the answer, the children's launch id, comes back the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"
#include "wire/launch_request.hpp"

namespace lattice::wire {

// What one PMIx_Spawn may ask for: apps, children and per-app arguments and variables. Far
// beyond what MPI programs spawn; the launcher's and the agents' memory stays bounded.
inline constexpr size_t kMaxSpawnApps = 64;
inline constexpr uint32_t kMaxSpawnProcs = 4096;
inline constexpr size_t kMaxSpawnArgs = 4096;
inline constexpr size_t kMaxSpawnEnv = 4096;
inline constexpr size_t kMaxSpawnHosts = 4096;

struct SpawnRequest {
  std::string launch_id;  // the parent's
  uint32_t rank = 0;      // who called PMIx_Spawn
  std::vector<Application> apps;
  std::string workdir;             // empty: the parent's
  std::vector<std::string> hosts;  // node ids to use; empty: all the parent's
};

rpc::Outgoing spawn_request(const SpawnRequest& request);
// An error for a request beyond the bounds above, or with an app of no program or no process.
Result<SpawnRequest> decode_spawn(schema::PmixSpawn::Reader m);
rpc::Outgoing spawn_answer(const std::string& child_launch_id);
// The children's launch id, or why there is none (the answer's error, or the call's).
Result<std::string> decode_spawn_answer(const Result<schema::Envelope::Reader>& reply);

}  // namespace lattice::wire
