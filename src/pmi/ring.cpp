// PMIX_Ring inputs and outputs (see ring.hpp).
#include "pmi/ring.hpp"

#include <limits>
#include <string_view>
#include <vector>

#include "base/strings.hpp"

namespace lattice::pmi {

namespace {

const std::string kRingKeyPrefix = std::string(1, kReservedKeyMark) + "ring:";

std::optional<RingValues> decode_ring_input(std::string_view value) {
  size_t c1 = value.find(',');
  if (c1 == std::string_view::npos) return std::nullopt;
  size_t c2 = value.find(',', c1 + 1);
  if (c2 == std::string_view::npos) return std::nullopt;
  auto count = parse_int(value.substr(0, c1));
  auto left_size = parse_int(value.substr(c1 + 1, c2 - c1 - 1));
  std::string_view rest = value.substr(c2 + 1);
  // Counts stay within int so that summing a whole world's cannot overflow.
  if (!count || *count < 0 || *count > std::numeric_limits<int>::max() || !left_size ||
      *left_size < 0 || static_cast<uint64_t>(*left_size) > rest.size())
    return std::nullopt;
  auto split_at = static_cast<size_t>(*left_size);
  return RingValues{*count, std::string(rest.substr(0, split_at)),
                    std::string(rest.substr(split_at))};
}

}  // namespace

std::string ring_key(int rank) { return cat(kRingKeyPrefix, rank); }

std::string encode_ring_input(const RingValues& input) {
  return cat(input.count, ',', input.left.size(), ',', input.left, input.right);
}

std::map<int, RingValues> ring_inputs(const std::vector<KvView>& merged) {
  std::map<int, RingValues> out;
  for (const auto& [key, value] : merged) {
    if (!starts_with(key, kRingKeyPrefix)) continue;
    auto rank = parse_int(std::string_view(key).substr(kRingKeyPrefix.size()));
    auto input = decode_ring_input(value);
    if (!rank || *rank < 0 || *rank > std::numeric_limits<int>::max() || !input) continue;
    out[static_cast<int>(*rank)] = std::move(*input);
  }
  return out;
}

std::map<int, RingValues> ring_outputs(const std::map<int, RingValues>& inputs) {
  std::vector<const std::pair<const int, RingValues>*> order;
  order.reserve(inputs.size());
  for (const auto& entry : inputs) order.push_back(&entry);
  std::map<int, RingValues> out;
  int64_t before = 0;
  size_t n = order.size();
  for (size_t i = 0; i < n; ++i) {
    const RingValues& prev = order[(i + n - 1) % n]->second;
    const RingValues& next = order[(i + 1) % n]->second;
    out[order[i]->first] = RingValues{before, prev.right, next.left};
    before += order[i]->second.count;
  }
  return out;
}

}  // namespace lattice::pmi
