// Test helpers: owned key-value lists to and from the views and packed chunks the fence works on.
#pragma once

#include <string>
#include <vector>

#include "base/kv_store.hpp"
#include "fence/chunk.hpp"

namespace lattice::fence::test {

inline std::vector<KvView> views(const KvList& list) {
  return std::vector<KvView>(list.begin(), list.end());
}

inline KvList owned(const std::vector<KvView>& entries) {
  KvList out;
  for (const auto& [key, value] : entries) out.emplace_back(key, value);
  return out;
}

inline KvList owned(const KvStore& store) { return owned(store.entries); }

// A chunk's entries, unpacked.
inline KvList entries_of(const Chunk& chunk) { return owned(store_of({chunk})); }

// One chunk of `entries`, packed, with the given framing.
inline Chunk chunk_of(const KvList& entries, uint64_t epoch = 1, uint32_t index = 0,
                      uint32_t count = 1) {
  Chunk chunk = make_chunks(epoch, views(entries), SIZE_MAX).at(0);
  chunk.index = index;
  chunk.count = count;
  return chunk;
}

}  // namespace lattice::fence::test
