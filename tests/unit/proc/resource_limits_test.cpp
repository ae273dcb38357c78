// Slurm's PropagateResourceLimits spellings, and this process's own limits as the launcher
// sends them.
#include "proc/resource_limits.hpp"

#include <doctest/doctest.h>
#include <sys/resource.h>

namespace lattice::proc {
namespace {

TEST_CASE("propagated limits: ALL, NONE, a list in any case, and what is not a limit") {
  CHECK(parse_propagated("ALL")->size() == kResourceCount);
  CHECK(parse_propagated(" none ")->empty());
  auto some = parse_propagated("nofile, Stack,NOFILE");
  REQUIRE(some);
  CHECK(*some == std::vector<Resource>{Resource::nofile, Resource::stack});
  CHECK(describe_propagated(*some) == "NOFILE,STACK");
  CHECK(describe_propagated(*parse_propagated("all")) == "ALL");
  auto bad = parse_propagated("NOFILE,FILES");
  REQUIRE(!bad);
  CHECK(bad.error().message.find("'FILES' is not a resource limit") != std::string::npos);
}

TEST_CASE("own limits: every resource, unlimited as UINT64_MAX") {
  rlimit nofile{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &nofile) == 0);
  auto limits = own_soft_limits();
  REQUIRE(limits.size() == kResourceCount);
  CHECK(limits[static_cast<int>(Resource::nofile)].soft == nofile.rlim_cur);
  CHECK(rlimit_of(Resource::stack) == RLIMIT_STACK);
  CHECK(resource_name(Resource::as) == "AS");
  uint32_t mask = own_umask();
  CHECK(mask <= 0777);
  CHECK(own_umask() == mask);  // reading it leaves it as it was
}

}  // namespace
}  // namespace lattice::proc
