// --mem, --mem-per-cpu and --exclusive on the wire: the request's fields, an agent's word that
// a limit is not enforced, and an out-of-memory kill in a rank's exit and in a failure.
#include <doctest/doctest.h>

#include "wire/failure_codec.hpp"
#include "wire/launch_request.hpp"
#include "wire/reports.hpp"

using namespace lattice;
using namespace lattice::wire;

TEST_CASE("memory limits and --exclusive travel with the launch request") {
  LaunchRequest sent;
  sent.launch_id = "L-1";
  sent.world_size = 1;
  sent.memory_bytes = uint64_t{64} << 20;
  sent.memory_per_cpu = uint64_t{3} << 30;
  sent.exclusive = true;
  auto msg = launch_request(sent);
  auto got = decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->memory_bytes == uint64_t{64} << 20);
  CHECK(got->memory_per_cpu == uint64_t{3} << 30);
  CHECK(got->exclusive);
  LaunchRequest plain;
  plain.launch_id = "L-2";
  plain.world_size = 1;
  auto none = decode_launch_request(
      launch_request(plain).envelope().asReader().getBody().getLaunchProcesses());
  REQUIRE(none);
  CHECK(none->memory_bytes == 0);
  CHECK(none->memory_per_cpu == 0);
  CHECK_FALSE(none->exclusive);
}

TEST_CASE("a rank killed by the out-of-memory killer says so in its exit, with the limit") {
  auto msg = rank_exit({"L-1", 1, 3, 77, proc::ExitStatus{0, 9, true, uint64_t{64} << 20}});
  auto exit = decode_rank_exit(msg.envelope().asReader().getBody().getRankExit());
  CHECK(exit.status.signal == 9);
  CHECK(exit.status.out_of_memory);
  CHECK(exit.status.memory_limit == uint64_t{64} << 20);
  auto plain = decode_rank_exit(rank_exit({"L-1", 1, 3, 77, proc::ExitStatus{0, 9}})
                                    .envelope()
                                    .asReader()
                                    .getBody()
                                    .getRankExit());
  CHECK_FALSE(plain.status.out_of_memory);
  // An exit with no signal is no kill, whatever a hostile agent says.
  auto odd = decode_rank_exit(rank_exit({"L-1", 1, 3, 77, proc::ExitStatus{0, 0, true, 1}})
                                  .envelope()
                                  .asReader()
                                  .getBody()
                                  .getRankExit());
  CHECK_FALSE(odd.status.out_of_memory);
}

TEST_CASE("an out-of-memory failure reads back with its limit") {
  policy::Failure f;
  f.kind = policy::FailureKind::out_of_memory;
  f.rank = 3;
  f.node = "n1";
  f.signal = 9;
  f.exit_code = 137;
  f.memory_limit = uint64_t{64} << 20;
  auto got =
      decode_abort(abort_message("L-1", f).envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.kind == policy::FailureKind::out_of_memory);
  CHECK(got.memory_limit == uint64_t{64} << 20);
  CHECK(policy::describe(got) ==
        "rank 3 on n1 was killed by the out-of-memory killer: the launch's memory limit 64 MiB on "
        "that node");
}

TEST_CASE("an agent's word that a limit is not enforced reads back, bounded") {
  Accepted sent{"n1", {}, 5, true, {}, "memory 64 MiB: not enforced: no cgroup"};
  auto got =
      decode_accepted(launch_accepted(sent).envelope().asReader().getBody().getLaunchAccepted());
  CHECK(got.unenforced == "memory 64 MiB: not enforced: no cgroup");
  sent.unenforced.assign(kMaxUnenforcedBytes * 4, 'x');
  got = decode_accepted(launch_accepted(sent).envelope().asReader().getBody().getLaunchAccepted());
  CHECK(got.unenforced.size() == kMaxUnenforcedBytes);
}
