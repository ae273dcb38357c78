// PMI_process_mapping: every example of docs/pmi-wire.md §6, and what wrapping implies.
#include "pmi/mapping.hpp"

#include <doctest/doctest.h>

namespace lattice::pmi {
namespace {

TEST_CASE("process_mapping: the examples of docs/pmi-wire.md section 6") {
  CHECK(process_mapping({0, 0, 0, 0}) == "(vector,(0,1,4))");             // 4 ranks, one node
  CHECK(process_mapping({0, 0, 1, 1}) == "(vector,(0,2,2))");             // 2 nodes x 2, block
  CHECK(process_mapping({0, 1, 0, 1}) == "(vector,(0,2,1))");             // round-robin
  CHECK(process_mapping({0, 0, 1, 1, 1}) == "(vector,(0,1,2),(1,1,3))");  // uneven 2 + 3
  CHECK(process_mapping({0, 1, 2, 3}) == "(vector,(0,4,1))");             // 4 nodes x 1
}

TEST_CASE("process_mapping: wrapping, partial periods, uneven tails") {
  CHECK(process_mapping({0}) == "(vector,(0,1,1))");
  CHECK(process_mapping({0, 1, 0, 1, 0}) == "(vector,(0,2,1))");  // cyclic, 5 over 2
  CHECK(process_mapping({0, 1, 2, 0, 1, 2, 0}) == "(vector,(0,3,1))");
  CHECK(process_mapping({0, 0, 1, 1, 0, 0, 1, 1, 0}) == "(vector,(0,2,2))");  // block-cyclic
  CHECK(process_mapping({0, 0, 0, 1, 1, 1, 2, 2}) == "(vector,(0,2,3),(2,1,2))");
  CHECK(process_mapping({0, 1, 1, 0}) == "(vector,(0,1,1),(1,1,2))");  // wraps to node 0
}

TEST_CASE("process_mapping: node ids are renumbered in order of first appearance") {
  CHECK(process_mapping({1, 1, 0, 0}) == "(vector,(0,2,2))");
  CHECK(process_mapping({7, 3, 7, 3}) == "(vector,(0,2,1))");
}

TEST_CASE("process_mapping: no ranks") { CHECK(process_mapping({}).empty()); }

TEST_CASE("process_mapping: a large block layout stays one block") {
  std::vector<int> nodes;
  for (int n = 0; n < 64; ++n)
    for (int r = 0; r < 128; ++r) nodes.push_back(n);
  CHECK(process_mapping(nodes) == "(vector,(0,64,128))");
}

}  // namespace
}  // namespace lattice::pmi
