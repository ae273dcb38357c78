// A rank the out-of-memory killer ended: the launch's failure says so, with the node's limit,
// keeps SIGKILL's job status, and under -K0 is a bad exit like any other.
#include <doctest/doctest.h>

#include <csignal>

#include "only.hpp"
#include "policy/job_policy.hpp"
#include "policy/launch_policy.hpp"

using namespace lattice::policy;
using lattice::proc::ExitStatus;

TEST_CASE("an out-of-memory kill fails the launch as such, with the limit") {
  LaunchPolicy p(LaunchShape{"n1", 1, 0, 2, {3, 4}});
  for (int r : {3, 4}) CHECK(p.spawned(r, 2).empty());
  auto a = p.exited(3, ExitStatus{0, SIGKILL, true, uint64_t{64} << 20}, false);
  REQUIRE(only<FirstFailure>(a).size() == 1);
  const Failure f = only<FirstFailure>(a)[0].failure;
  CHECK(f.kind == FailureKind::out_of_memory);
  CHECK(f.exit_code == 128 + SIGKILL);
  CHECK(f.memory_limit == uint64_t{64} << 20);
  CHECK(describe(f) ==
        "rank 3 on n1 was killed by the out-of-memory killer: the launch's memory limit 64 MiB on "
        "that node");
  CHECK(only<KillRanks>(a).size() == 1);  // the others end with it, as after any bad exit
}

TEST_CASE("without a limit of its own, the kill is still named") {
  LaunchPolicy p(LaunchShape{"n0", 0, 0, 1, {0}});
  CHECK(p.spawned(0, 0).empty());
  auto a = p.exited(0, ExitStatus{0, SIGKILL, true, 0}, false);
  REQUIRE(only<FirstFailure>(a).size() == 1);
  CHECK(describe(only<FirstFailure>(a)[0].failure) ==
        "rank 0 on n0 was killed by the out-of-memory killer");
}

TEST_CASE("-K0: an out-of-memory kill reported by a node is the job's status, not an abort") {
  JobPolicy p(2, 0, false);
  for (int i = 0; i < 2; ++i) p.sent(i), p.accepted(i);
  Failure oom;
  oom.kind = FailureKind::out_of_memory;
  oom.exit_code = 137;
  oom.rank = 1;
  CHECK(only<AbortNode>(p.ended(1, oom)).empty());
  CHECK(!p.aborting());
  CHECK(p.failure()->exit_code == 137);
}
