// wipe: ordinary memory that held secret bytes comes back zeroed, its size kept.
#include "base/wipe.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

TEST_CASE("wipe zeroes ordinary strings that held secrets, keeping their size") {
  std::string frame = "a plaintext frame with a key";
  lattice::wipe(frame);
  CHECK(frame == std::string(28, '\0'));
  std::string empty;
  lattice::wipe(empty);
  CHECK(empty.empty());
  std::vector<std::string> block{"FI_CXI_AUTH_KEY=00ff", "PATH=/bin"};
  lattice::wipe(block);
  CHECK(block[0] == std::string(20, '\0'));
  CHECK(block[1] == std::string(9, '\0'));
}
