#include "agent/pmix_blobs.hpp"

#include <charconv>

#include "base/strings.hpp"

namespace lattice::agent {

namespace {
constexpr std::string_view kPrefix = "pmix.";
}

pmi::KvList PmixBlobs::contribution(std::string blob) {
  if (blob.empty() || blob == last_) return {};
  last_ = blob;
  return {{cat(kPrefix, node_index_), std::move(blob)}};
}

Result<std::string> PmixBlobs::fence_data(const std::vector<KvView>& merged) const {
  size_t bytes = 0;
  for (const auto& [key, value] : merged) bytes += value.size();
  std::string all;
  all.reserve(bytes);
  for (const auto& [key, value] : merged) {
    int node = -1;
    auto digits = key.substr(std::min(key.size(), kPrefix.size()));
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), node);
    if (key.substr(0, kPrefix.size()) != kPrefix || ec != std::errc() ||
        end != digits.data() + digits.size() || node < 0)
      return make_error(cat("a PMIx fence entry under '", key, "', which is no node's"));
    if (node != node_index_) all += value;
  }
  return all;
}

}  // namespace lattice::agent
