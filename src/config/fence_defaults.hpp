// A launch's fence settings, which the launcher decides for the whole launch (flags, then its
// configuration file, then these) so that every agent builds the same tree.
#pragma once

#include <cstdint>

namespace lattice::config {

inline constexpr uint32_t kDefaultFanout = 8;
// Wider trees than this would have one agent fan a fence out to thousands of peers at once
// (and a fanout must fit the tree's int).
inline constexpr uint32_t kMaxFanout = 1 << 16;
inline constexpr uint32_t kDefaultFenceTimeoutMs = 60000;

}  // namespace lattice::config
