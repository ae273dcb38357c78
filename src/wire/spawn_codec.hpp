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
inline constexpr size_t kMaxSpawnPath = 4096;  // a hostfile's path, in bytes

struct SpawnRequest {
  std::string launch_id;  // the parent's
  uint32_t rank = 0;      // who called PMIx_Spawn
  std::vector<Application> apps;
  std::string workdir;                 // empty: the parent's
  std::vector<std::string> hosts;      // node ids to use; empty: all the parent's
  std::vector<std::string> hostfiles;  // files naming more of them (read by the launcher)
};

rpc::Outgoing spawn_request(const SpawnRequest& request);
// An error for a request beyond the bounds above, or with an app of no program or no process.
Result<SpawnRequest> decode_spawn(schema::PmixSpawn::Reader m);
// The children: their launch, and each one's node as an index into the parent's nodes (the
// launcher's answer to the head; the head's to a node carries the id alone).
struct SpawnedLaunch {
  std::string launch_id;
  std::vector<uint32_t> rank_nodes;
};

rpc::Outgoing spawn_answer(const SpawnedLaunch& child);
// The children, or why there are none (the answer's error, or the call's); more children than a
// spawn may ask for is an error.
Result<SpawnedLaunch> decode_spawn_answer(const Result<schema::Envelope::Reader>& reply);

// The head's word to a node of the parent's launch (PmixFamily).
struct FamilyNotice {
  std::string launch_id;  // the parent's
  SpawnedLaunch child;
};

rpc::Outgoing family_notice(const FamilyNotice& notice);
// An error for no child or more than a spawn may start; node indices are the receiver's to check.
Result<FamilyNotice> decode_family_notice(schema::PmixFamily::Reader m);

}  // namespace lattice::wire
