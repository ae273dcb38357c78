// "Did you mean": the nearest of a set of names to a mistyped one, for the command lines' and the
// config file's errors. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lattice {

// Edits from a to b: insertions, deletions, substitutions and swaps of neighbours ("lable").
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if one is close enough to be a typo of it: within 2 edits
// and fewer than half of `word`'s letters ("foo" is no typo of "qos"). Ties: the first listed.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& names);

}  // namespace lattice
