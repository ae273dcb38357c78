// Every size limit of the PMI engine, each with the reason for its value. A rank that exceeds
// one gets an rc != 0 answer naming the limit (puts) or fails the launch (frames).
// Limits is a value type so tests and the agent can lower them.
#pragma once

#include <cstddef>

namespace lattice::pmi {

// PMI-1 `keylen_max` we announce in `maxes`; also Slurm libpmi2's PMI2_MAX_KEYLEN.
constexpr size_t kMaxKeyBytes = 64;
// PMI-1 `vallen_max` (MPICH 4.0.2 then clamps its own values to 1024-256-64-30 = 674 and
// splits longer ones into segments); also Slurm libpmi2's PMI2_MAX_VALLEN.
constexpr size_t kMaxValueBytes = 1024;
// One PMI-1 line or PMI-2 frame. Real requests stay under 2.1 KiB (a 1024-byte value escaped
// to 2048); 64 KiB leaves room for spawn requests while bounding a hostile length field.
constexpr size_t kMaxFrameBytes = 64 * 1024;
// Keys one rank may store (KVS puts plus node attributes). MPICH puts a handful per rank;
// the cap stops one runaway rank from growing every agent's merged store.
constexpr size_t kMaxKeysPerRank = 1024;
// Key + value bytes one rank may store; 256 such ranks fit a 64 MiB merged store.
constexpr size_t kMaxBytesPerRank = 256 * 1024;
// PMI-1 `kvsname_max` we announce; the kvsname (the launch's jobid) must fit in it.
constexpr size_t kMaxKvsnameBytes = 256;
// MPICH 4.0.2's PMI-1 client reads response lines into a 1024-byte buffer: a longer answer
// line arrives truncated, so such answers are refused instead.
constexpr size_t kPmi1ClientLineMax = 1023;

// A published service name (MPI_Publish_name): MPI_MAX_PORT_NAME is 256 in MPICH.
constexpr size_t kMaxServiceNameBytes = 256;

struct Limits {
  size_t max_key = kMaxKeyBytes;
  size_t max_value = kMaxValueBytes;
  size_t max_frame = kMaxFrameBytes;
  size_t max_keys_per_rank = kMaxKeysPerRank;
  size_t max_bytes_per_rank = kMaxBytesPerRank;
  size_t max_kvsname = kMaxKvsnameBytes;
};

}  // namespace lattice::pmi
