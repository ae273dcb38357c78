// Chunking and reassembly of fence stores. A store is packed once, into its chunks; after that
// chunks are shared, never copied, and viewed where they are.
#include "fence/chunk.hpp"

#include <cassert>

#include "base/strings.hpp"
#include "fence/kv_pack.hpp"

namespace lattice::fence {
namespace {

std::shared_ptr<const std::string> packed(const std::vector<KvView>& entries) {
  std::string bytes(packed_size(entries), '\0');
  pack(entries, bytes.data());
  return std::make_shared<const std::string>(std::move(bytes));
}

}  // namespace

const std::shared_ptr<const std::string>& no_entries() {
  static const auto none = std::make_shared<const std::string>();
  return none;
}

std::vector<Chunk> make_chunks(uint64_t epoch, const std::vector<KvView>& store,
                               size_t max_chunk_bytes) {
  std::vector<std::vector<KvView>> parts(1);
  size_t bytes = 0;
  for (const auto& entry : store) {
    const size_t size = entry.first.size() + entry.second.size();
    if (!parts.back().empty() && bytes + size > max_chunk_bytes) {
      parts.emplace_back();
      bytes = 0;
    }
    parts.back().push_back(entry);
    bytes += size;
  }
  const auto count = static_cast<uint32_t>(parts.size());
  std::vector<Chunk> chunks(count);
  for (uint32_t i = 0; i < count; ++i) {
    chunks[i].epoch = epoch;
    chunks[i].index = i;
    chunks[i].count = count;
    chunks[i].entries = packed(parts[i]);
    chunks[i].keys = parts[i].size();
  }
  return chunks;
}

KvStore store_of(const std::vector<Chunk>& chunks) {
  KvStore store;
  size_t keys = 0;
  for (const Chunk& chunk : chunks) keys += chunk.keys;
  store.entries.reserve(keys);
  for (const Chunk& chunk : chunks) {
    view_packed(*chunk.entries, store.entries);
    store.owned_bytes += chunk.entries->size();
    store.owners.push_back(chunk.entries);
  }
  return store;
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
  const uint32_t index = chunk.index;
  parts_.emplace(index, std::move(chunk));
  return {};
}

KvStore ChunkAssembly::take() {
  assert(complete());
  std::vector<Chunk> in_order;
  in_order.reserve(parts_.size());
  for (auto& part : parts_) in_order.push_back(std::move(part.second));
  parts_.clear();
  count_ = 0;
  return store_of(in_order);
}

}  // namespace lattice::fence
