#include "base/suggest.hpp"

#include <algorithm>

namespace lattice {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the table: the swap of neighbours looks two rows back.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& names) {
  const std::string* nearest = nullptr;
  size_t best = std::min<size_t>(3, (word.size() + 1) / 2);
  for (const auto& name : names)
    if (size_t d = edit_distance(word, name); d < best) best = d, nearest = &name;
  if (!nearest) return std::nullopt;
  return *nearest;
}

}  // namespace lattice
