// The soft descriptor limit is raised to the hard one.
#include "base/open_files.hpp"

#include <doctest/doctest.h>
#include <sys/resource.h>

using namespace lattice;

TEST_CASE("a low soft limit on open files is raised to the hard limit") {
  rlimit before{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max <= 64) return;  // nothing to raise
  rlimit low{64, before.rlim_max};
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  const size_t limit = raise_open_files_limit();
  rlimit after{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &after) == 0);
  CHECK(limit > 64);
  CHECK(after.rlim_cur == limit);
  if (before.rlim_max != RLIM_INFINITY) CHECK(after.rlim_cur == before.rlim_max);
  CHECK(after.rlim_max == before.rlim_max);
  // Raising again changes nothing.
  CHECK(raise_open_files_limit() == limit);
}
