// Building and joining shared key-value stores (see kv_store.hpp).
#include "base/kv_store.hpp"

#include <algorithm>

namespace lattice {

KvStore owning_store(std::vector<std::pair<std::string, std::string>> list) {
  auto owner =
      std::make_shared<const std::vector<std::pair<std::string, std::string>>>(std::move(list));
  KvStore store;
  store.entries.reserve(owner->size());
  for (const auto& [key, value] : *owner) {
    store.entries.emplace_back(key, value);
    store.owned_bytes += key.size() + value.size();
  }
  store.owners.push_back(std::move(owner));
  return store;
}

void append(KvStore& store, KvStore more) {
  if (store.owners.empty() && store.entries.empty()) {
    store = std::move(more);
    return;
  }
  store.owners.insert(store.owners.end(), std::make_move_iterator(more.owners.begin()),
                      std::make_move_iterator(more.owners.end()));
  store.owned_bytes += more.owned_bytes;
  store.entries.insert(store.entries.end(), more.entries.begin(), more.entries.end());
}

void keep_last_by_key(std::vector<KvView>& entries) {
  auto by_key = [](const KvView& a, const KvView& b) { return a.first < b.first; };
  if (!std::is_sorted(entries.begin(), entries.end(), by_key))
    std::stable_sort(entries.begin(), entries.end(), by_key);  // equal keys keep their order
  size_t kept = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].first == entries[i].first) continue;
    entries[kept++] = entries[i];
  }
  entries.resize(kept);
}

}  // namespace lattice
