// Chunks: the unit a fence contribution or merged store travels in between agents, and the
// per-sender reassembly that validates them. Chunks of one sender may arrive in any order;
// malformed or duplicate ones are refused as values, never thrown. A chunk's entries are packed
// bytes (kv_pack.hpp), shared: a node forwards and keeps the very bytes it received.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/kv_store.hpp"
#include "base/result.hpp"

namespace lattice::fence {

using KvList = std::vector<std::pair<std::string, std::string>>;

// The packed bytes of no entries, one string shared by every chunk made without any: a chunk
// decoded from a message starts out as one, and must not cost an allocation for it.
const std::shared_ptr<const std::string>& no_entries();

struct Chunk {  // one piece of a contribution or of the merged store
  uint64_t epoch = 0;
  uint32_t index = 0;  // 0..count-1
  uint32_t count = 1;  // chunks in this contribution/result (>= 1; an empty store is 1 empty chunk)
  std::shared_ptr<const std::string> entries = no_entries();  // packed (kv_pack.hpp)
  size_t keys = 0;                                            // entries packed in it
};

// 16 KiB of key+value bytes per chunk: its frame fits one sealed record (64 KiB) and one read,
// and an intermediate agent forwards a chunk as soon as it is in, so the smaller the chunk the
// less each level of the tree adds to the way down. Smaller still and per-message costs (a
// record, a write, a loop turn) start to show: on this project's two-core machine 16 and
// 64 KiB cost the same agent CPU per fence at 128 agents x 1024 keys, and lattice-bench-sim
// predicts 19.6 ms instead of 25.3 ms at 4,096 nodes with fanout 8 (issue 11).
inline constexpr size_t kDefaultChunkBytes = 16 * 1024;

// Packs a store into chunks of at most `max_chunk_bytes` of key+value bytes, keeping the entry
// order; an entry larger than the limit gets a chunk of its own (every chunk has >= 1 entry,
// except the single chunk of an empty store).
std::vector<Chunk> make_chunks(uint64_t epoch, const std::vector<KvView>& store,
                               size_t max_chunk_bytes);

// The entries of `chunks`, in order, as views into their bytes (which the store shares).
KvStore store_of(const std::vector<Chunk>& chunks);

// Collects the chunks of one (epoch, sender). The caller checks the epoch; this checks the
// index/count framing. Memory grows with chunks actually received, never with a claimed count.
class ChunkAssembly {
 public:
  // Refuses (and ignores) count 0, index >= count, a count differing from the first chunk's,
  // and an index already received.
  Status add(Chunk chunk);
  bool started() const { return count_ > 0; }
  bool complete() const { return started() && parts_.size() == count_; }
  // Every entry in chunk order; the assembly is empty afterwards. Only when complete().
  KvStore take();

 private:
  uint32_t count_ = 0;  // 0 until the first chunk arrives
  std::map<uint32_t, Chunk> parts_;
};

}  // namespace lattice::fence
