#include "launcher/fence_clocks.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace lattice::launcher {
namespace {

using Fences = std::vector<lattice::wire::FenceTimes>;

// Bounds on (child's origin - parent's origin), in µs, from the fences both reported:
//   up:   child.reduced (sent up) <= parent.reduced (merged every child) -> at most their gap;
//   down: parent.store (had it, before sending it on) <= child.store -> at least their gap.
// nullopt unless both bounds exist and agree.
std::optional<double> offset_us(const Fences& parent, const Fences& child) {
  std::map<uint64_t, const lattice::wire::FenceTimes*> by_epoch;
  for (const auto& f : parent) by_epoch[f.epoch] = &f;
  auto gap = [](uint64_t a, uint64_t b) { return static_cast<double>(a) - static_cast<double>(b); };
  const double inf = std::numeric_limits<double>::infinity();
  double upper = inf, lower = -inf;
  for (const auto& c : child) {
    auto it = by_epoch.find(c.epoch);
    if (it == by_epoch.end()) continue;
    const auto& p = *it->second;
    if (p.reduced_us && c.reduced_us) upper = std::min(upper, gap(p.reduced_us, c.reduced_us));
    if (p.store_us && c.store_us) lower = std::max(lower, gap(p.store_us, c.store_us));
  }
  if (upper == inf || lower == -inf || lower > upper) return std::nullopt;
  return (lower + upper) / 2;
}

}  // namespace

std::vector<std::optional<double>> align_by_fences(const fence::Tree& tree,
                                                   std::vector<std::optional<double>> origins,
                                                   const std::vector<Fences>& fences) {
  if (origins.size() != static_cast<size_t>(tree.size()) || fences.size() != origins.size())
    return origins;
  // Level by level from the head, so each parent is placed before its children.
  tree.for_each_in_subtree(tree.root(), [&](int node) {
    const int parent = tree.parent(node);
    if (parent < 0) return;
    const auto c = static_cast<size_t>(node), p = static_cast<size_t>(parent);
    if (!origins[c] || !origins[p]) return;
    if (auto offset = offset_us(fences[p], fences[c])) origins[c] = *origins[p] + *offset / 1e3;
  });
  return origins;
}

}  // namespace lattice::launcher
