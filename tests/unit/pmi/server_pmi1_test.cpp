// The server with PMI-1 clients: the MPICH 4.0.2 4-rank transcript (whole, byte-at-a-time,
// odd chunks), PMI_PORT mode, fence bookkeeping, abort, spawn and unsupported commands.
#include <doctest/doctest.h>

#include <algorithm>

#include "base/strings.hpp"
#include "pmi_test_support.hpp"

namespace lattice::pmi {
namespace {

using test::ask;
using test::FakeHooks;
using test::local_launch;

constexpr const char* kInit = "cmd=init pmi_version=1 pmi_subversion=1\n";

TEST_CASE("pmi1: MPICH 4.0.2 four-rank session replays byte for byte") {
  auto t = test::load_transcript("mpich-4.0.2-pmi1-4ranks.txt");
  CHECK(std::count_if(t.steps.begin(), t.steps.end(),
                      [](const test::Step& s) { return s.kind == test::Step::request; }) == 52);
  SUBCASE("whole requests") { test::replay(t); }
  SUBCASE("byte at a time") { test::replay(t, 1); }
  SUBCASE("seven bytes at a time") { test::replay(t, 7); }
}

TEST_CASE("pmi1: PMI_PORT + PMI_ID handshake replays byte for byte") {
  test::replay(test::load_transcript("mpich-4.0.2-pmi1-pmi-port.txt"));
  test::replay(test::load_transcript("mpich-4.0.2-pmi1-pmi-port.txt"), 1);
}

TEST_CASE("pmi1: fences, status and hooks along an MPICH-like session") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c0 = server.connect(0);
  ConnId c1 = server.connect(1);
  CHECK(server.status()[0].state == RankState::waiting);
  ask(server, hooks, c0, kInit);
  ask(server, hooks, c1, kInit);
  CHECK(hooks.initialized == std::vector<int>{0, 1});
  CHECK(server.status()[1].state == RankState::initialized);

  CHECK(ask(server, hooks, c0, "cmd=put kvsname=job-1 key=-bcast-1-0 value=ab\n") ==
        "cmd=put_result rc=0 msg=success\n");
  hooks.clock_ms = 2000;
  CHECK(ask(server, hooks, c0, "cmd=barrier_in\n").empty());
  auto st = server.status();
  CHECK(st[0].state == RankState::in_fence);
  CHECK(st[0].last_command == "barrier_in");
  CHECK(st[0].last_activity_ms == 2000);
  CHECK(st[0].fences_entered == 1);
  CHECK(server.ranks_not_in_fence() == std::vector<int>{1});
  CHECK(hooks.ready.empty());
  CHECK(server.fence_epoch() == 0);

  CHECK(ask(server, hooks, c1, "cmd=barrier_in\n").empty());
  REQUIRE(hooks.ready.size() == 1);
  CHECK(hooks.ready[0].first == 1);
  CHECK(hooks.ready[0].second == KvList{{"-bcast-1-0", "ab"}});
  CHECK(server.fence_epoch() == 1);
  CHECK(server.ranks_not_in_fence().empty());  // announced: waiting on other nodes only

  // Other nodes' puts arrive merged with ours.
  server.fence_complete(1, owning_store({{"-bcast-1-0", "ab"}, {"hostname[7]", "n7"}}));
  CHECK(hooks.take_for(c0) == "cmd=barrier_out\n");
  CHECK(hooks.take_for(c1) == "cmd=barrier_out\n");
  CHECK(server.status()[0].state == RankState::initialized);
  CHECK(ask(server, hooks, c1, "cmd=get kvsname=job-1 key=hostname[7]\n") ==
        "cmd=get_result rc=0 msg=success value=n7\n");

  CHECK(ask(server, hooks, c0, "cmd=finalize\n") == "cmd=finalize_ack\n");
  CHECK(hooks.finalized == std::vector<int>{0});
  CHECK(server.status()[0].state == RankState::finalized);
  server.eof(c0);  // MPICH closes after finalize_ack: quiet
  CHECK(hooks.failures.empty());

  // Every request and response was traced.
  CHECK(hooks.traces.front() == "C:" + std::string("cmd=init pmi_version=1 pmi_subversion=1"));
  CHECK(hooks.traces.back() == "S:cmd=finalize_ack");
}

TEST_CASE("pmi1: a stale or duplicate fence completion is ignored") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  ask(server, hooks, c, "cmd=barrier_in\n");
  server.fence_complete(2, {});  // not announced
  CHECK(hooks.sent.empty());
  server.fence_complete(1, {});
  CHECK(hooks.take_for(c) == "cmd=barrier_out\n");
  server.fence_complete(1, {});  // twice
  CHECK(hooks.sent.empty());
}

TEST_CASE("pmi1: a fence completed from inside fence_ready (re-entrant) still answers") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  hooks.on_fence_ready = [&](uint64_t epoch, const KvList& puts) {
    server.fence_complete(epoch, owning_store(puts));
  };
  ConnId c0 = server.connect(0);
  ConnId c1 = server.connect(1);
  ask(server, hooks, c0, kInit);
  ask(server, hooks, c1, kInit);
  ask(server, hooks, c0, "cmd=put kvsname=job-1 key=k value=v\n");
  ask(server, hooks, c0, "cmd=barrier_in\n");
  // The second barrier_in and a get in the same read: the get must see the fence's puts.
  CHECK(ask(server, hooks, c1, "cmd=barrier_in\ncmd=get kvsname=job-1 key=k\n") ==
        "cmd=barrier_out\ncmd=get_result rc=0 msg=success value=v\n");
  CHECK(hooks.take_for(c0) == "cmd=barrier_out\n");
}

TEST_CASE("pmi1: abort reports the exit code and message, answers nothing") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c = server.connect(1);
  ask(server, hooks, c, kInit);
  // Captured from MPICH 4.0.2: MPI_Abort(MPI_COMM_WORLD, 5) sends no message.
  CHECK(ask(server, hooks, c, "cmd=abort exitcode=5\n").empty());
  REQUIRE(hooks.aborts.size() == 1);
  CHECK(hooks.aborts[0].rank == 1);
  CHECK(hooks.aborts[0].exit_code == 5);
  CHECK(hooks.aborts[0].message.empty());
  server.eof(c);  // the client exits: not a second failure
  CHECK(hooks.failures.empty());

  ConnId bare = server.connect(std::nullopt);  // abort before init, a message, a bad code
  ask(server, hooks, bare, "cmd=abort exitcode=x msg=out of memory\n");
  REQUIRE(hooks.aborts.size() == 2);
  CHECK(hooks.aborts[1].rank == -1);
  CHECK_FALSE(hooks.aborts[1].exit_code.has_value());
  CHECK(hooks.aborts[1].message == "out of memory");
}

TEST_CASE("pmi1: spawn is refused after the last mcmd block") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  std::string block1 =
      "mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=2\nspawnssofar=1\nargcnt=0\nendcmd\n";
  std::string block2 =
      "mcmd=spawn\nnprocs=1\nexecname=b\ntotspawns=2\nspawnssofar=2\nargcnt=0\nendcmd\n";
  CHECK(ask(server, hooks, c, block1).empty());
  CHECK(ask(server, hooks, c, block2) ==
        "cmd=spawn_result rc=1 msg='spawn'_is_not_supported_by_this_launcher\n");
}

TEST_CASE("pmi1: name service and unknown commands get rc != 0 with a msg") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  CHECK(ask(server, hooks, c, "cmd=publish_name service=s port=p\n") ==
        "cmd=publish_result rc=1 msg='publish_name'_is_not_supported_by_this_launcher\n");
  CHECK(ask(server, hooks, c, "cmd=lookup_name service=s\n") ==
        "cmd=lookup_result rc=1 msg='lookup_name'_is_not_supported_by_this_launcher\n");
  CHECK(ask(server, hooks, c, "cmd=unpublish_name service=s\n").find("cmd=unpublish_result rc=1") ==
        0);
  CHECK(ask(server, hooks, c, "cmd=frobnicate x=1\n") ==
        "cmd=frobnicate_result rc=1 msg=unknown_PMI-1_command_'frobnicate'\n");
  CHECK(hooks.failures.empty());  // the connection is kept
  CHECK(ask(server, hooks, c, "cmd=get_appnum\n") == "cmd=appnum appnum=0\n");
}

TEST_CASE("pmi1: get_appnum answers each rank's own app (MPMD)") {
  FakeHooks hooks;
  LaunchInfo info = local_launch(3);
  info.appnums = {0, 1, 1};
  Server server(info, hooks);
  for (int rank = 0; rank < 3; ++rank) {
    ConnId c = server.connect(rank);
    ask(server, hooks, c, kInit);
    CHECK(ask(server, hooks, c, "cmd=get_appnum\n") ==
          cat("cmd=appnum appnum=", rank == 0 ? 0 : 1, "\n"));
  }
}

TEST_CASE("pmi1: kvsname and value checks on put and get") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c0 = server.connect(0);
  ask(server, hooks, c0, kInit);
  CHECK(ask(server, hooks, c0, "cmd=put kvsname=other key=k value=v\n") ==
        "cmd=put_result rc=1 msg=unknown_kvsname_\"other\"_(this_launch's_is_\"job-1\")\n");
  CHECK(ask(server, hooks, c0, "cmd=put kvsname=job-1 key=k\n") ==
        "cmd=put_result rc=1 msg=put_needs_key=_and_value=\n");
  // A value put over PMI-2 with spaces cannot be read back by a PMI-1 client.
  ConnId c1 = server.connect(1);
  ask(server, hooks, c1, "cmd=init pmi_version=2 pmi_subversion=0\n");
  ask(server, hooks, c1, test::frame("cmd=fullinit;"));
  ask(server, hooks, c1, test::frame("cmd=kvs-put;key=spaced;value=a b;"));
  ask(server, hooks, c0, "cmd=barrier_in\n");
  ask(server, hooks, c1, test::frame("cmd=kvs-fence;"));
  server.fence_complete(1, owning_store(hooks.ready.at(0).second));
  hooks.take_sent();
  CHECK(ask(server, hooks, c0, "cmd=get kvsname=job-1 key=spaced\n")
            .find("cmd=get_result rc=1 msg=the_value_of_key_\"spaced\"") == 0);
}

TEST_CASE("pmi1: served names are parked until answered, in MPICH's shape") {
  FakeHooks hooks;
  hooks.serve_names = true;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  CHECK(ask(server, hooks, c, "cmd=publish_name service=svc port=tag#0$port#1\n").empty());
  REQUIRE(hooks.names.size() == 1);
  CHECK(hooks.names[0].op == NameOp::publish);
  CHECK(hooks.names[0].name == "svc");
  CHECK(hooks.names[0].port == "tag#0$port#1");
  // A second request while one is pending is refused, the first stays parked.
  CHECK(ask(server, hooks, c, "cmd=lookup_name service=svc\n").find("rc=1") != std::string::npos);
  server.name_answer(c, std::string());
  CHECK(hooks.take_for(c) == "cmd=publish_result rc=0 info=ok\n");
  CHECK(ask(server, hooks, c, "cmd=lookup_name service=svc\n").empty());
  server.name_answer(c, std::string("tag#0$port#1"));
  CHECK(hooks.take_for(c) == "cmd=lookup_result rc=0 info=ok port=tag#0$port#1\n");
  CHECK(ask(server, hooks, c, "cmd=lookup_name service=other\n").empty());
  server.name_answer(c, Result<std::string>(make_error("service 'other' is not published")));
  CHECK(hooks.take_for(c) == "cmd=lookup_result rc=1 msg=service_'other'_is_not_published\n");
  server.name_answer(c, std::string("late"));  // nothing pending: ignored
  CHECK(hooks.take_for(c).empty());
  CHECK(ask(server, hooks, c, "cmd=publish_name service=svc\n").find("no_port_given") !=
        std::string::npos);
  CHECK(ask(server, hooks, c, "cmd=lookup_name\n").find("no_service_name_given") !=
        std::string::npos);
  CHECK(hooks.failures.empty());
}

}  // namespace
}  // namespace lattice::pmi
