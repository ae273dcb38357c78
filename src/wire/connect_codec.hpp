// PMIx_Connect / PMIx_Disconnect / a fence over some procs (PmixConnect): a participating node's
// request to the launch's head agent, which answers every participating node once all have asked
// (agent/connect_tally.hpp); the response carries every node's data joined (a fence's blobs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// Participants one collective may name: each is a rank or a whole namespace.
inline constexpr size_t kMaxCollectiveProcs = 65536;
inline constexpr size_t kMaxNspaceBytes = 255;  // PMIX_MAX_NSLEN
inline constexpr int kEveryRank = -1;           // PMIX_RANK_WILDCARD

enum class CollectiveKind { connect, disconnect, fence, group_construct, group_destruct };

struct CollectiveProc {
  std::string nspace;
  int rank = kEveryRank;
  bool operator<(const CollectiveProc& o) const {
    return nspace != o.nspace ? nspace < o.nspace : rank < o.rank;
  }
  bool operator==(const CollectiveProc& o) const { return nspace == o.nspace && rank == o.rank; }
};

struct CollectiveRequest {
  std::string launch_id;
  CollectiveKind kind = CollectiveKind::connect;
  std::vector<CollectiveProc> procs;
  std::string data;   // fence: this node's blob; a group: its members' endpoint data
  std::string group;  // a group's name (groups only; at most kMaxNspaceBytes)
};

// The head's answer: every node's data joined, and a group's context id (0: none).
struct CollectiveAnswer {
  std::string data;
  uint64_t context_id = 0;
};

const char* kind_name(CollectiveKind kind);
rpc::Outgoing collective_request(const CollectiveRequest& request);
// Bounded: too many procs, a namespace too long or a rank that names nobody is an error.
Result<CollectiveRequest> decode_collective(schema::PmixConnect::Reader m);
rpc::Outgoing collective_answer(const CollectiveAnswer& answer);
// The head's answer, or why the collective failed.
Result<CollectiveAnswer> decode_collective_answer(const Result<schema::Envelope::Reader>& reply);

}  // namespace lattice::wire
