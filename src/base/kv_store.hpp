// Key-value entries as views into bytes that other objects own and share. A fence's merged store
// travels as packed chunks; each node keeps those chunks and indexes them instead of copying
// every key and value into strings of its own, which on a busy node cost more than moving the
// bytes did (issue 11).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lattice {

using KvView = std::pair<std::string_view, std::string_view>;

struct KvStore {
  std::vector<std::shared_ptr<const void>> owners;  // keep the viewed bytes alive
  size_t owned_bytes = 0;                           // what the owners hold, viewed or not
  std::vector<KvView> entries;
};

// A store owning `list` (moved in, so the views stay valid), entries in its order.
KvStore owning_store(std::vector<std::pair<std::string, std::string>> list);

// `more` appended to `store`: its owners and entries after the store's own.
void append(KvStore& store, KvStore more);

// Sorted by key, each key once: of entries with the same key the last one stays (a later put,
// a later node in the fence's order). Already sorted entries are not sorted again.
void keep_last_by_key(std::vector<KvView>& entries);

}  // namespace lattice
