#include "base/suggest.hpp"

#include <doctest/doctest.h>

using namespace lattice;

TEST_CASE("edit distance: insertions, deletions, substitutions, swapped neighbours") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("ntask", "ntasks") == 1);
  CHECK(edit_distance("lable", "label") == 1);  // a swap is one edit
  CHECK(edit_distance("nodes", "ndoes") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ppn", "ppnn") == 1);
}

TEST_CASE("closest: a typo's nearest name, or none") {
  const std::vector<std::string> names = {"ntasks", "nodes", "label", "ntasks-per-node", "qos"};
  CHECK(closest("ntask", names) == "ntasks");
  CHECK(closest("lable", names) == "label");
  CHECK(closest("ntasks-per-nod", names) == "ntasks-per-node");
  CHECK(closest("foo", names) == std::nullopt);  // 3 letters, 2 edits from qos: no typo
  CHECK(closest("frobnicate", names) == std::nullopt);
  CHECK(closest("", names) == std::nullopt);
  CHECK(closest("nodes", {}) == std::nullopt);
}
