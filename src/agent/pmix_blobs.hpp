// How a PMIx launch's fence data travels the agents' tree fence: each node contributes libpmix's
// opaque blob for its ranks as one value under its own key, in binary (the fence carries values
// as length-prefixed bytes, fence/kv_pack.hpp); what libpmix gets back is the other nodes'
// values, concatenated in any order (all it asks of its host).
//
// What the ranks already have is not carried again. libpmix 4.2.2 builds a node's blob from every
// key its ranks ever committed (src/server/pmix_server_ops.c, _collect_data: a fetch of their
// whole REMOTE scope), so a second fence re-sends the first fence's data; and a server stores what
// a fence brings over what it holds, key by key (gds/hash, _hash_store_modex -> pmix_hash_store).
// Every node of a launch takes part in each of its fences (the tree fence spans them all), so
// once a fence completed every node holds each blob that fence carried; a blob byte-identical to
// the one its node carried last would store nothing new anywhere, and is left out. Only the owning
// node's direct modex hands its ranks' data out between fences (possibly newer than its last
// blob): after it served one, its next blob is carried whatever it holds. A node's own blob is
// not handed back to its own libpmix, which built it from what it holds.
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

// One node's side of what the fences of one launch carried.
class PmixBlobs {
 public:
  explicit PmixBlobs(int node_index) : node_index_(node_index) {}

  // This node's contribution to a fence: its blob under "pmix.<node_index>"; nothing for an
  // empty blob (a fence without data) or for the blob it carried last.
  pmi::KvList contribution(std::string blob);
  // This node handed its ranks' data out outside a fence: its next blob is carried in full.
  void served_outside_fence() { last_.clear(); }
  // What libpmix gets from a merged store: every other node's blob, concatenated; an error
  // naming a key that is no node's.
  Result<std::string> fence_data(const std::vector<KvView>& merged) const;

 private:
  int node_index_;
  std::string last_;  // the blob this node carried last (empty: none, or forgotten)
};

}  // namespace lattice::agent
