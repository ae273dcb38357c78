// An allocation's messages (AllocationStart, AllocationEnd, AllocationEnded, AllocationInfo) as
// plain values, for the key holder that starts one, the agents that keep it, and the user's
// launcher that asks about it. Decoding bounds what it copies and refuses what no agent could
// hold; judging the values against the node is the agent's (agent/allocation.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"
#include "wire/launch_request.hpp"

namespace lattice::wire {

// Nodes an allocation may hold: as many as a launch may span.
inline constexpr size_t kMaxAllocationNodes = 65536;
// GPUs named for one node.
inline constexpr size_t kMaxAllocationGpus = 256;

struct AllocationSpec {
  std::string id;
  JobUser user;
  std::vector<PeerInfo> nodes;  // by node index; node 0 runs the batch step
  uint32_t node_index = 0;      // the receiving node's
  uint64_t time_limit_ms = 0;   // 0: none
  uint32_t cpus = 0;            // on this node; 0: all the agent may use
  uint64_t memory_bytes = 0;    // on this node; 0: no limit
  std::vector<std::string> gpus;
  std::optional<CxiKey> cxi;
  bool slurm_compat = false;
};

// Marked secret when it carries a CXI key.
rpc::Outgoing allocation_start(const AllocationSpec& spec);
Result<AllocationSpec> decode_allocation_start(schema::AllocationStart::Reader in);

struct AllocationEnd {
  std::string id;
  std::string reason;
};
rpc::Outgoing allocation_end(const AllocationEnd& end);
AllocationEnd decode_allocation_end(schema::AllocationEnd::Reader in);

struct AllocationEnded {
  std::string id;
  uint32_t node_index = 0;
  std::string reason;
  bool time_limit = false;
  uint32_t killed = 0;
};
rpc::Outgoing allocation_ended(const AllocationEnded& ended);
AllocationEnded decode_allocation_ended(schema::AllocationEnded::Reader in);

// The request names the allocation only; the answer describes it (never its CXI key).
struct AllocationInfo {
  std::string id;
  JobUser user;
  std::vector<PeerInfo> nodes;
  uint32_t node_index = 0;  // the answering agent's
  uint64_t remaining_ms = 0;
  bool slurm_compat = false;
  bool has_cxi = false;
};
rpc::Outgoing allocation_info_request(const std::string& id);
rpc::Outgoing allocation_info(const AllocationInfo& info);
Result<AllocationInfo> decode_allocation_info(schema::AllocationInfo::Reader in);

// An allocation id as an agent takes it: 1..128 bytes of letters, digits and "-_.", not
// starting with '.' (it names files and appears in logs and environments).
bool valid_allocation_id(std::string_view id);

}  // namespace lattice::wire
