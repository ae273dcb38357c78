// Chunking and reassembly of fence stores. Both only move strings; the one copy of a store
// happens in the const overload of make_chunks, where the caller keeps its own.
#include "fence/chunk.hpp"

#include <cassert>
#include <iterator>

#include "base/strings.hpp"

namespace lattice::fence {

std::vector<Chunk> make_chunks(uint64_t epoch, KvList&& store, size_t max_chunk_bytes) {
  std::vector<Chunk> chunks(1);
  size_t bytes = 0;
  for (auto& entry : store) {
    const size_t size = entry.first.size() + entry.second.size();
    if (!chunks.back().entries.empty() && bytes + size > max_chunk_bytes) {
      chunks.emplace_back();
      bytes = 0;
    }
    chunks.back().entries.push_back(std::move(entry));
    bytes += size;
  }
  store.clear();
  const auto count = static_cast<uint32_t>(chunks.size());
  for (uint32_t i = 0; i < count; ++i) {
    chunks[i].epoch = epoch;
    chunks[i].index = i;
    chunks[i].count = count;
  }
  return chunks;
}

std::vector<Chunk> make_chunks(uint64_t epoch, const KvList& store, size_t max_chunk_bytes) {
  return make_chunks(epoch, KvList(store), max_chunk_bytes);
}

Status ChunkAssembly::add(Chunk chunk) {
  if (chunk.count == 0) return make_error("chunk count is 0");
  if (chunk.index >= chunk.count)
    return make_error(cat("chunk index ", chunk.index, " is not below its count ", chunk.count));
  if (started() && chunk.count != count_)
    return make_error(cat("chunk count changed from ", count_, " to ", chunk.count));
  if (parts_.count(chunk.index))
    return make_error(cat("duplicate chunk ", chunk.index, " of ", chunk.count));
  count_ = chunk.count;
  parts_.emplace(chunk.index, std::move(chunk.entries));
  return {};
}

KvList ChunkAssembly::take() {
  assert(complete());
  KvList out;
  if (parts_.size() == 1) {  // the usual store of one chunk: its list as it came
    out = std::move(parts_.begin()->second);
  } else {
    size_t total = 0;
    for (const auto& part : parts_) total += part.second.size();
    out.reserve(total);
    for (auto& part : parts_)
      out.insert(out.end(), std::make_move_iterator(part.second.begin()),
                 std::make_move_iterator(part.second.end()));
  }
  parts_.clear();
  count_ = 0;
  return out;
}

}  // namespace lattice::fence
