// Lays the agents' clocks on the launcher's more tightly than the launch request's round trip
// can, using the fence tree's own causality. A relayed request reaches a leaf through its
// relays, so the window agent_clock_origin_ms() has for it is as wide as the whole fan-out (tens
// of ms at 256 agents here), wider than the fences -v reports. But every fence orders a child
// against its parent both ways: the child sent its contribution up before the parent could
// merge it, and the parent had the merged store before the child did. Over a launch's fences
// those two bounds pin the child's clock to its parent's within the link's shortest one-way
// delays, and the tree chains each node to the head's.
#pragma once

#include <optional>
#include <vector>

#include "fence/tree.hpp"
#include "wire/reports.hpp"

namespace lattice::launcher {

// origins[i]: where node i's launch clock starts on the launcher's (ms; nullopt: the node never
// got the request), as agent_clock_origin_ms() estimated it; fences[i]: its reported fences.
// Returns the origins with every node whose fences bound it against its parent's (both ways,
// consistently) placed midway between those bounds from its parent's placed origin; the head
// and every other node keep their estimate.
std::vector<std::optional<double>> align_by_fences(
    const fence::Tree& tree, std::vector<std::optional<double>> origins,
    const std::vector<std::vector<lattice::wire::FenceTimes>>& fences);

}  // namespace lattice::launcher
