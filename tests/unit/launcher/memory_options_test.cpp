// lattice launch's --mem, --mem-per-cpu and --exclusive, and what the report says of a rank
// the out-of-memory killer ended.
#include <doctest/doctest.h>

#include "launcher/options.hpp"
#include "launcher/report.hpp"

using namespace lattice::launcher;
using Args = std::vector<std::string>;

namespace {

std::string error_of(const Args& argv) {
  auto o = parse_launch_options(argv);
  REQUIRE_MESSAGE(!o, "parsed, but an error was expected");
  return o.error().message;
}

}  // namespace

TEST_CASE("--mem: srun's units, M by default; 0 is no limit") {
  auto mem = [](const std::string& v) {
    auto o = parse_launch_options(Args{"--mem", v, "prog"});
    REQUIRE_MESSAGE(o, (o ? "" : o.error().message));
    return o->memory_bytes;
  };
  CHECK(mem("64") == uint64_t{64} << 20);
  CHECK(mem("64M") == uint64_t{64} << 20);
  CHECK(mem("512k") == uint64_t{512} << 10);
  CHECK(mem("2G") == uint64_t{2} << 30);
  CHECK(mem("1T") == uint64_t{1} << 40);
  CHECK(mem("0") == 0);
  auto joined = parse_launch_options(Args{"--mem=3g", "prog"});
  REQUIRE(joined);
  CHECK(joined->memory_bytes == uint64_t{3} << 30);
  CHECK(joined->memory_per_cpu == 0);
  auto none = parse_launch_options(Args{"prog"});
  REQUIRE(none);
  CHECK(none->memory_bytes == 0);
  CHECK(none->memory_per_cpu == 0);
  CHECK_FALSE(none->exclusive);
}

TEST_CASE("--mem-per-cpu: the same units, and no 0") {
  auto o = parse_launch_options(Args{"--mem-per-cpu", "100M", "prog"});
  REQUIRE(o);
  CHECK(o->memory_per_cpu == uint64_t{100} << 20);
  CHECK(o->memory_bytes == 0);
  CHECK(error_of({"--mem-per-cpu", "0", "prog"}) ==
        "--mem-per-cpu: expected a size such as 512M or 4G, got '0'");
}

TEST_CASE("--mem and --mem-per-cpu are mutually exclusive, in either order") {
  CHECK(error_of({"--mem", "1G", "--mem-per-cpu", "1G", "prog"}) ==
        "--mem and --mem-per-cpu are mutually exclusive");
  CHECK(error_of({"--mem-per-cpu=1G", "--mem=0", "prog"}) ==
        "--mem and --mem-per-cpu are mutually exclusive");
}

TEST_CASE("--mem: bad sizes name the flag") {
  CHECK(error_of({"--mem", "lots", "prog"}) ==
        "--mem: expected a size such as 512M or 4G, got 'lots'");
  CHECK(error_of({"--mem", "64MB", "prog"}) ==
        "--mem: expected a size such as 512M or 4G, got '64MB'");
  CHECK(error_of({"--mem", "-1", "prog"}) == "--mem: expected a size such as 512M or 4G, got '-1'");
  CHECK(error_of({"--mem-per-cpu", "9999999T", "prog"}) ==
        "--mem-per-cpu: expected a size such as 512M or 4G, got '9999999T'");
  CHECK(error_of({"--mem"}) == "--mem needs a value");
}

TEST_CASE("--exclusive takes no value") {
  auto o = parse_launch_options(Args{"--exclusive", "prog"});
  REQUIRE(o);
  CHECK(o->exclusive);
  CHECK(error_of({"--exclusive=user", "prog"}) == "--exclusive takes no value");
}

TEST_CASE("the exit summary names the out-of-memory killer and the limit") {
  std::map<int, RankResult> ranks{{0, {0, 0, 0}},
                                  {1, {0, 0, 9, true, uint64_t{64} << 20}},
                                  {2, {0, 0, 9}},
                                  {3, {1, 0, 9, true, 0}}};
  CHECK(summarize_exits(ranks, {0, 0, 0, 1}, {true, true}) ==
        "rank 0: exited 0; rank 2: killed by signal 9 (SIGKILL); rank 3: killed by the "
        "out-of-memory killer; rank 1: killed by the out-of-memory killer (memory limit 64 MiB)");
  CHECK(job_exit_code(std::nullopt, ranks, 4) == 137);
}
