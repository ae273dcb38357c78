// The per-launch store with its limits and per-rank accounting (see kvs.hpp).
#include "pmi/kvs.hpp"

#include "base/strings.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

Status check_key(std::string_view key, const Limits& limits) {
  if (key.empty()) return make_error("empty key");
  if (key.size() > limits.max_key)
    return make_error(cat("key ", quoted(key), " is ", key.size(), " bytes, over the ",
                          limits.max_key, "-byte key limit"));
  for (char ch : key) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '=' || c == ';')
      return make_error(cat("key ", quoted(key), " holds a byte not allowed in keys"));
  }
  return {};
}

Status check_value(std::string_view key, std::string_view value, const Limits& limits) {
  if (value.size() > limits.max_value)
    return make_error(cat("value of key ", quoted(key), " is ", value.size(), " bytes, over the ",
                          limits.max_value, "-byte value limit"));
  if (value.find('\0') != std::string_view::npos)
    return make_error(cat("value of key ", quoted(key), " holds a NUL byte"));
  return {};
}

Status Kvs::check_put(int rank, Space space, std::string_view key, std::string_view value) {
  if (auto st = check_key(key, limits_); !st) return st;
  if (auto st = check_value(key, value, limits_); !st) return st;
  return charge(rank, space, key, key.size() + value.size());
}

Status Kvs::charge(int rank, Space space, std::string_view key, size_t bytes) {
  std::string slot_key;
  slot_key.reserve(key.size() + 1);
  slot_key += static_cast<char>(space);
  slot_key += key;
  auto slot = std::make_pair(rank, std::move(slot_key));
  Usage& usage = usage_[rank];
  auto it = charged_.find(slot);
  size_t old_bytes = it == charged_.end() ? 0 : it->second;
  if (it == charged_.end() && usage.keys + 1 > limits_.max_keys_per_rank)
    return make_error(
        cat("rank ", rank, " already stores ", usage.keys, " keys, the per-rank key limit"));
  size_t new_total = usage.bytes - old_bytes + bytes;
  if (new_total > limits_.max_bytes_per_rank)
    return make_error(cat("rank ", rank, " would store ", new_total, " bytes, over the ",
                          limits_.max_bytes_per_rank, "-byte per-rank limit"));
  if (it == charged_.end()) {
    charged_.emplace(std::move(slot), bytes);
    ++usage.keys;
  } else {
    it->second = bytes;
  }
  usage.bytes = new_total;
  return {};
}

Status Kvs::put(int rank, std::string_view key, std::string_view value) {
  if (auto st = check_put(rank, Space::kvs, key, value); !st) return st;
  queue(std::string(key), std::string(value));
  return {};
}

void Kvs::put_reserved(std::string key, std::string value) {
  queue(std::move(key), std::move(value));
}

void Kvs::queue(std::string key, std::string value) {
  auto it = pending_index_.find(key);
  if (it != pending_index_.end()) {
    pending_[it->second].second = std::move(value);
    return;
  }
  pending_index_.emplace(key, pending_.size());
  pending_.emplace_back(std::move(key), std::move(value));
}

KvList Kvs::take_pending() {
  KvList out;
  out.swap(pending_);
  pending_index_.clear();
  return out;
}

void Kvs::publish(const KvList& merged) {
  for (const auto& [key, value] : merged)
    if (!is_reserved_key(key)) visible_[key] = value;
}

const std::string* Kvs::get(std::string_view key) const {
  auto it = visible_.find(std::string(key));
  return it == visible_.end() ? nullptr : &it->second;
}

Status Kvs::put_node_attr(int rank, std::string_view key, std::string_view value) {
  if (auto st = check_put(rank, Space::node, key, value); !st) return st;
  node_attrs_[std::string(key)] = std::string(value);
  return {};
}

const std::string* Kvs::node_attr(std::string_view key) const {
  auto it = node_attrs_.find(std::string(key));
  return it == node_attrs_.end() ? nullptr : &it->second;
}

}  // namespace lattice::pmi
