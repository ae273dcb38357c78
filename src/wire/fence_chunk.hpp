// A fence's chunks between agents: PmiFence (a subtree's contribution, up the tree) and
// PmiFenceComplete (the merged store, or why the fence failed, down it), both ways.
#pragma once

#include <string>

#include "base/result.hpp"
#include "fence/chunk.hpp"
#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// A fence message from a peer, decoded out of capnp (readers die with their callback).
struct FenceMessage {
  std::string launch_id;
  bool down = false;  // PmiFenceComplete (parent -> child) rather than PmiFence (child -> parent)
  int from = -1;      // sending node index
  fence::Chunk chunk;
  std::string error;  // a failed fence sent down (PmiFenceComplete.errorMessage)
};

// A chunk of `launch_id`'s fence from node `from`: up (PmiFence), or down (PmiFenceComplete,
// with `error` set when the fence failed).
rpc::Outgoing fence_chunk(const std::string& launch_id, int from, bool down,
                          const fence::Chunk& chunk, const std::string& error);
// An error when the packed entries are malformed (fence/kv_pack.hpp).
Result<FenceMessage> decode_fence_up(schema::PmiFence::Reader m);
Result<FenceMessage> decode_fence_down(schema::PmiFenceComplete::Reader m);

}  // namespace lattice::wire
