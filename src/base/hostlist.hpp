// Host lists as Slurm writes them ("n[1-256]", "gpu[001-064],login1"): a launch names its nodes
// in a few bytes however many there are, when their names are numbered (they usually are).
// compress() keeps the order: only neighbours with one prefix, numbered up by one, share a
// range, so expand(compress(names)) == names for every list of names without '[', ']' or ','.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice {

// nullopt when a name is empty or holds '[', ']' or ',' (the list is then sent as it is).
std::optional<std::string> compress_hostlist(const std::vector<std::string>& names);

// Comma-separated items, each a name or PREFIX[RANGES]SUFFIX with RANGES comma-separated
// numbers or LOW-HIGH ranges (a LOW written with leading zeros pads every number to its width).
// Hostile input is bounded: an Error beyond `max_names` names or on any malformed item.
Result<std::vector<std::string>> expand_hostlist(std::string_view list, size_t max_names);

}  // namespace lattice
