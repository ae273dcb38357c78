#include "agent/pmix_blobs.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

pmi::KvList pmix_contribution(int node_index, std::string_view blob) {
  return {{cat("pmix.", node_index), to_hex(blob)}};
}

Result<std::string> pmix_fence_data(const std::vector<KvView>& merged) {
  std::string all;
  for (const auto& [key, value] : merged) {
    auto blob = from_hex(value);
    if (!blob) return make_error(cat("a malformed PMIx blob under ", key));
    all += *blob;
  }
  return all;
}

}  // namespace lattice::agent
