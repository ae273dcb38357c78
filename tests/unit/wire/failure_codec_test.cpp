// Failures and the aborts that carry them read back the same on every side; a hostile kind or
// exit code is read safely.
#include "wire/failure_codec.hpp"

#include <doctest/doctest.h>

using namespace lattice;

TEST_CASE("aborts: the launcher's and a head's read back the same way") {
  auto from_launcher = wire::abort_message("L-3", policy::Failure{"interrupted by the user", 130});
  auto failure =
      wire::decode_abort(from_launcher.envelope().asReader().getBody().getAbortProcesses());
  CHECK(policy::describe(failure) == "interrupted by the user");
  CHECK(failure.fence_epoch == 0);
  CHECK(failure.exit_code == 130);
  CHECK(failure.rank == -1);
  auto from_head = wire::abort_message("L-3", policy::Failure{"fence 2 timed out", 1, -1, 2});
  CHECK(wire::decode_abort(from_head.envelope().asReader().getBody().getAbortProcesses())
            .fence_epoch == 2);
  // A relayed failure keeps what it was where it happened, field by field, and reads the same.
  policy::Failure exited;
  exited.kind = policy::FailureKind::exited;
  exited.exit_code = 137;
  exited.signal = 9;
  exited.rank = 5;
  exited.node = "n3";
  auto relayed = wire::abort_message("L-3", exited);
  auto got = wire::decode_abort(relayed.envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.kind == policy::FailureKind::exited);
  CHECK(got.exit_code == 137);
  CHECK(got.signal == 9);
  CHECK(got.rank == 5);
  CHECK(got.node == "n3");
  CHECK(policy::describe(got) == "rank 5 on n3 killed by signal 9 (SIGKILL)");
}

TEST_CASE("a node's link ended by its peer reads back as an echo of the peer's report") {
  policy::Failure f;
  f.kind = policy::FailureKind::node_lost;
  f.detail = "connection closed (closed by the peer)";
  f.node = "n2";
  f.peer = "n1";
  f.peer_ended = true;
  auto got = wire::decode_abort(
      wire::abort_message("L", f).envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.peer_ended);
  CHECK(policy::describe(got) == "node n1 closed its link with n2");
  f.peer_ended = false;
  CHECK(!wire::decode_abort(
             wire::abort_message("L", f).envelope().asReader().getBody().getAbortProcesses())
             .peer_ended);
}

TEST_CASE("a hostile failure: an unknown kind reads as its detail, exit code 0 as 1") {
  rpc::Outgoing msg;
  auto abort = msg.envelope().initBody().initAbortProcesses();
  auto f = abort.initFailure();
  f.setKind(static_cast<schema::FailureKind>(999));
  f.setDetail("from a newer peer");
  f.setExitCode(0);
  auto got = wire::decode_abort(msg.envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.kind == policy::FailureKind::other);
  CHECK(policy::describe(got) == "from a newer peer");
  CHECK(got.exit_code == 1);  // a failure never reports success
}
