// A failure's words, kind by kind: what the launcher prints and the agents log, rendered from
// fields only there.
#include "policy/failure.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace lattice::policy;

namespace {
Failure of(FailureKind kind, int rank = 3, std::string detail = "") {
  Failure f;
  f.kind = kind;
  f.rank = rank;
  f.node = "n1";
  f.detail = std::move(detail);
  return f;
}
}  // namespace

TEST_CASE("every kind renders as the reason people read") {
  Failure exited = of(FailureKind::exited);
  exited.exit_code = 7;
  CHECK(describe(exited) == "rank 3 on n1 exited with status 7");
  exited.exit_code = 137;
  exited.signal = 9;
  CHECK(describe(exited) == "rank 3 on n1 killed by signal 9 (SIGKILL)");
  CHECK(describe(of(FailureKind::no_finalize)) ==
        "rank 3 on n1 exited without calling PMI finalize");
  Failure abort = of(FailureKind::abort_called, 3, "bye");
  CHECK(describe(abort) == "rank 3 on n1 called abort: bye");
  abort.exit_code = 4;
  abort.exit_code_given = true;
  CHECK(describe(abort) == "rank 3 on n1 called abort with exit code 4: bye");
  CHECK(describe(of(FailureKind::pmi_error, 3, "bad frame")) ==
        "rank 3 on n1: PMI protocol error: bad frame");
  CHECK(describe(of(FailureKind::pmi_lost, 3, "closed its PMI connection without finalize")) ==
        "rank 3 on n1: closed its PMI connection without finalize");
  CHECK(describe(of(FailureKind::spawn_failed, 3, "no such file")) ==
        "cannot spawn rank 3 on n1: no such file");
  Failure fence = of(FailureKind::fence_timeout, -1);
  fence.fence_epoch = 2;
  fence.timeout_ms = 1500;
  CHECK(describe(fence) == "fence 2 timed out after 1.5 s");
  Failure lost = of(FailureKind::node_lost, -1, "heartbeat");
  lost.peer = "n4";
  CHECK(describe(lost) == "node n4 lost (heartbeat)");
  CHECK(describe(of(FailureKind::launcher_lost, -1, "eof")) ==
        "the launcher's connection was lost (eof)");
  Failure stopping = of(FailureKind::agent_stopping, -1);
  stopping.signal = 15;
  CHECK(describe(stopping) == "agent on n1 is shutting down (signal 15)");
  CHECK(describe(of(FailureKind::agent_killed, -1)) == "agent killed");
  CHECK(describe(Failure{"cannot reach agent n2 at h:1: refused"}) ==
        "cannot reach agent n2 at h:1: refused");
}

TEST_CASE("every failure kind has its own name, the metrics' reason label") {
  auto names = lattice::policy::kind_names();
  CHECK(names.size() == static_cast<size_t>(lattice::policy::FailureKind::out_of_memory) + 1);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  CHECK(names.front() == "other");
  CHECK(names.back() == "out_of_memory");
  CHECK(std::string(lattice::policy::kind_name(lattice::policy::FailureKind::fence_timeout)) ==
        "fence_timeout");
}
