// How a PMIx launch's fence data travels the agents' tree fence: each node contributes libpmix's
// opaque blob for its ranks as one hex value under its own key; what libpmix gets back is every
// value of the merged store, unhexed and concatenated in any order (all it asks of its host).
// Pure: the merged store comes from peer agents, whose sealed links vouch for who sent it, not
// for what it holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/kv_store.hpp"
#include "base/result.hpp"
#include "pmi/server.hpp"

namespace lattice::agent {

// This node's contribution to a fence: its blob under "pmix.<node_index>".
pmi::KvList pmix_contribution(int node_index, std::string_view blob);

// The merged store's blobs, concatenated; an error naming the key of a value that is not hex.
Result<std::string> pmix_fence_data(const std::vector<KvView>& merged);

}  // namespace lattice::agent
