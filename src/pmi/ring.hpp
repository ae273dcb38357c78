// PMIX_Ring (Slurm's PMI-2 `ring` extension) computed as a fence: each rank's (count, left,
// right) input travels in the fence under a reserved key; once the merged store is back, every
// node computes the outputs of Slurm's src/plugins/mpi/pmi2/ring.c over the ranks in rank
// order: count = sum of the counts before the rank, left = the previous rank's right input,
// right = the next rank's left input, both wrapping around.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pmi/kvs.hpp"

namespace lattice::pmi {

struct RingValues {
  int64_t count = 0;
  std::string left;
  std::string right;
};

// The reserved key carrying `rank`'s ring input.
std::string ring_key(int rank);
// The input as one value ("count,left_size,left right": no separator can be confused).
std::string encode_ring_input(const RingValues& input);
// Every ring input in a merged store, by rank; malformed reserved entries are skipped.
std::map<int, RingValues> ring_inputs(const std::vector<KvView>& merged);
// The output of every rank that gave an input (Slurm's semantics above).
std::map<int, RingValues> ring_outputs(const std::map<int, RingValues>& inputs);

}  // namespace lattice::pmi
