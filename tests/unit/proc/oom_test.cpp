// The kernel's count of out-of-memory kills, read from the files cgroup v2 and v1 keep it in,
// and how a rank it killed is described.
#include <doctest/doctest.h>

#include "base/strings.hpp"
#include "proc/exit_status.hpp"
#include "proc/kernel_files.hpp"

using namespace lattice;
using namespace lattice::proc;

TEST_CASE("oom_kill from cgroup v2's memory.events") {
  CHECK(parse_oom_kills("low 0\nhigh 0\nmax 17\noom 2\noom_kill 2\noom_group_kill 0\n") == 2u);
  CHECK(parse_oom_kills("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n") == 0u);
}

TEST_CASE("oom_kill from cgroup v1's memory.oom_control") {
  CHECK(parse_oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 5\n") == 5u);
  CHECK(parse_oom_kills("oom_kill_disable 0\nunder_oom 0\n") == std::nullopt);  // before 4.13
}

TEST_CASE("oom_kill: what does not parse is no count") {
  CHECK(parse_oom_kills("") == std::nullopt);
  CHECK(parse_oom_kills("oom_kill\n") == std::nullopt);
  CHECK(parse_oom_kills("oom_kill -3\n") == std::nullopt);
  CHECK(parse_oom_kills("oom_kill x\noom_kill 4\n") == 4u);
  CHECK(parse_oom_kills("oom_group_kill 7\n") == std::nullopt);
}

TEST_CASE("a rank the out-of-memory killer ended is described as such") {
  CHECK(describe(ExitStatus{0, 9}) == "killed by signal 9 (SIGKILL)");
  CHECK(describe(ExitStatus{0, 9, true, uint64_t{64} << 20}) ==
        "killed by the out-of-memory killer (memory limit 64 MiB)");
  CHECK(describe(ExitStatus{0, 9, true, 0}) == "killed by the out-of-memory killer");
  CHECK(job_exit_code(ExitStatus{0, 9, true, 1}) == 137);
}

TEST_CASE("sizes for people") {
  CHECK(size_text(uint64_t{64} << 20) == "64 MiB");
  CHECK(size_text(uint64_t{2} << 30) == "2 GiB");
  CHECK(size_text(uint64_t{3} << 40) == "3 TiB");
  CHECK(size_text(1536) == "1536 bytes");
  CHECK(size_text(0) == "0 bytes");
}
