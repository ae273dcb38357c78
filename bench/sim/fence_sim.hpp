// The fence between agents, simulated: every node runs the real fence::Reducer, and the
// SendUp / SendDown / Complete actions it returns become modeled messages and CPU time, so the
// chunking, merging and pipelining are the engine's own. Time 0 is the last rank entering.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fence/chunk.hpp"
#include "model.hpp"

namespace lattice::sim {

// How the merged store travels down. full: every chunk keeps its entries at every node (M^2
// strings in memory at once in a star). hollow: the root's chunks are measured (keys, bytes)
// and travel down with the same epoch/index/count but no entries; the Reducer's downward path
// looks only at those three, so it acts identically, and each node is charged for the measured
// sizes. The upward path (the merges) is always full.
enum class FenceMethod { full, hollow };

struct FenceSetup {
  int nodes = 1;
  int fanout = 2;  // >= nodes - 1: a star
  int ranks_per_node = 1;
  size_t value_bytes = 64;  // one put per rank, key "f1-RANK"
  size_t chunk_bytes = fence::kDefaultChunkBytes;
  FenceMethod method = FenceMethod::hollow;
};

struct FenceResult {
  double time_us = 0;     // last rank in -> last rank out
  double root_in_us = 0;  // when the root had every contribution (the end of the way up)
  int last_node = -1;     // whose ranks were released last
  int depth = 0;
  uint32_t down_chunks = 0;  // chunks of the merged store
  size_t store_keys = 0;     // keys every node completed with (checked equal on all)
  uint64_t messages = 0;
  double bytes = 0;
};

// Throws std::runtime_error when the engine refuses an input or a node never completes (a bug
// in the simulator or the engine, never a modeled outcome).
FenceResult simulate_fence(const Model& model, const FenceSetup& setup);

// Bytes of key+value data every node ends up holding (what decides whether `full` fits).
double fence_store_bytes(const FenceSetup& setup);

}  // namespace lattice::sim
