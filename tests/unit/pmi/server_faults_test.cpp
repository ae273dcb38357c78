// The server under faults: garbage, oversized frames, lying lengths, requests before init,
// second inits, EOF at every stage, limit violations and failed fences.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "pmi_test_support.hpp"

namespace lattice::pmi {
namespace {

using test::ask;
using test::FakeHooks;
using test::frame;
using test::local_launch;

constexpr const char* kInit = "cmd=init pmi_version=1 pmi_subversion=1\n";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("faults: bytes that are no PMI fail the client, and it is ignored afterwards") {
  FakeHooks hooks;
  Server server(local_launch(4), hooks);
  ConnId c = server.connect(2);
  SUBCASE("a malformed length field") { server.receive(c, "4x    cmd=kvs-fence;"); }
  SUBCASE("the same, one byte at a time") {
    for (char ch : std::string("4x    cmd=kvs-fence;")) server.receive(c, std::string(1, ch));
  }
  REQUIRE(hooks.failures.size() == 1);
  CHECK(hooks.failures[0].conn == c);
  CHECK(hooks.failures[0].rank == 2);
  CHECK(hooks.failures[0].message == "malformed PMI-2 frame length \"4x    \"");
  CHECK(server.status()[2].state == RankState::gone);
  server.receive(c, kInit);
  server.eof(c);
  CHECK(hooks.sent.empty());
  CHECK(hooks.failures.size() == 1);
}

TEST_CASE("faults: undecodable messages fail the client") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId a = server.connect(0);
  server.receive(a, "cmd= oops\n");
  ConnId b = server.connect(std::nullopt);
  server.receive(b, frame("key=x;"));
  REQUIRE(hooks.failures.size() == 2);
  CHECK(hooks.failures[0].message == "malformed PMI-1 line \"cmd= oops\"");
  CHECK(hooks.failures[1].rank == -1);
  CHECK(has(hooks.failures[1].message, "PMI-2 message does not start"));
}

TEST_CASE("faults: oversized frames and lines") {
  LaunchInfo info = local_launch(1);
  info.limits.max_frame = 128;
  FakeHooks hooks;
  Server server(info, hooks);
  SUBCASE("PMI-2 length over the limit") {
    ConnId c = server.connect(0);
    server.receive(c, "129   ");
    REQUIRE(hooks.failures.size() == 1);
    CHECK(hooks.failures[0].message ==
          "PMI-2 frame length \"129   \" exceeds the 128-byte frame limit");
  }
  SUBCASE("PMI-1 line with no end") {
    ConnId c = server.connect(0);
    server.receive(c, "cmd=put kvsname=job-1 key=k value=" + std::string(200, 'v'));
    REQUIRE(hooks.failures.size() == 1);
    CHECK(has(hooks.failures[0].message, "128-byte frame limit"));
  }
}

TEST_CASE("faults: a frame length that lies") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, frame("cmd=fullinit;"));
  SUBCASE("too short: the rest is taken for the next length") {
    server.receive(c, "14    cmd=job-getid;abc=1;");
    CHECK(hooks.take_for(c) == frame("cmd=job-getid-response;jobid=job-1;rc=0;"));
    server.receive(c, frame("cmd=kvs-fence;"));
    REQUIRE(hooks.failures.size() == 1);
    CHECK(hooks.failures[0].message == "malformed PMI-2 frame length \"abc=1;\"");
    CHECK(hooks.sent.empty());
  }
  SUBCASE("too long: EOF in the middle of the frame") {
    server.receive(c, "30    cmd=kvs-fence;");
    CHECK(hooks.sent.empty());
    server.eof(c);
    REQUIRE(hooks.failures.size() == 1);
    CHECK(hooks.failures[0].message ==
          "closed its PMI connection without finalize (20 bytes of an unfinished "
          "request)");
  }
}

TEST_CASE("faults: requests before init get rc != 0 on their own wire") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c = server.connect(0);
  CHECK(ask(server, hooks, c, "cmd=get_maxes\n") ==
        "cmd=maxes rc=1 msg=rank_0_sent_'get_maxes'_before_init\n");
  CHECK(ask(server, hooks, c, "cmd=barrier_in\n") ==
        "cmd=barrier_out rc=1 msg=rank_0_sent_'barrier_in'_before_init\n");
  ask(server, hooks, c, "cmd=init pmi_version=2 pmi_subversion=0\n");
  CHECK(ask(server, hooks, c, frame("cmd=kvs-put;thrid=9;key=k;value=v;")) ==
        frame("cmd=kvs-put-response;thrid=9;rc=1;errmsg=rank 0 sent 'kvs-put' before fullinit;"));
  CHECK(server.status()[0].state == RankState::waiting);
  CHECK(server.status()[0].last_command == "kvs-put");
  CHECK(hooks.failures.empty());
  server.eof(c);  // never initialized: quiet
  CHECK(hooks.failures.empty());
}

TEST_CASE("faults: a second init is refused") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c = server.connect(0);
  CHECK(ask(server, hooks, c, kInit) ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  CHECK(ask(server, hooks, c, kInit) ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=1 msg=rank_0_sent_init_twice\n");
  // Another connection claiming the same rank.
  ConnId dup = server.connect(0);
  CHECK(ask(server, hooks, dup, kInit) ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=1 "
        "msg=rank_0_initialized_twice_(it_is_initialized)\n");
  // PMI-2: fullinit twice.
  ConnId p = server.connect(1);
  ask(server, hooks, p, frame("cmd=fullinit;"));
  CHECK(ask(server, hooks, p, frame("cmd=fullinit;")) ==
        frame("cmd=fullinit-response;rc=1;errmsg=rank 1 sent fullinit twice;"));
  CHECK(hooks.initialized == std::vector<int>{0, 1});
  // Unsupported versions and ranks that are not here.
  ConnId other = server.connect(5);
  CHECK(ask(server, hooks, other, "cmd=init pmi_version=3 pmi_subversion=0\n") ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=1 msg=unsupported_PMI_version_3\n");
  ConnId far = server.connect(5);
  CHECK(ask(server, hooks, far, kInit) ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=1 "
        "msg=rank_5_is_not_one_of_this_node's_ranks\n");
  CHECK(hooks.failures.empty());
}

TEST_CASE("faults: initack that cannot be honoured fails the client") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId a = server.connect(std::nullopt);
  server.receive(a, "cmd=initack pmiid=9\n");
  ConnId b = server.connect(1);
  server.receive(b, "cmd=initack pmiid=0\n");
  REQUIRE(hooks.failures.size() == 2);
  CHECK(hooks.failures[0].message == "initack names \"9\", not one of this node's ranks");
  CHECK(hooks.failures[1].message == "initack pmiid=0 on the connection of rank 1");
  CHECK(hooks.sent.empty());
}

TEST_CASE("port connections name their rank only with a one-time PMI_ID") {
  FakeHooks hooks;
  LaunchInfo info = local_launch(2);
  info.port_ids = {{"1804289383", 0}, {"846930886", 1}};
  Server server(info, hooks);
  // A rank number is not an id: a local user guessing ranks gets nowhere.
  ConnId guess = server.connect_port();
  server.receive(guess, "cmd=initack pmiid=0\n");
  REQUIRE(hooks.failures.size() == 1);
  CHECK(hooks.failures[0].message.find("is not one this launch issued") != std::string::npos);
  // The real id works once, and then never again.
  ConnId real = server.connect_port();
  CHECK(ask(server, hooks, real, "cmd=initack pmiid=846930886\n") ==
        "cmd=initack\ncmd=set size=2\ncmd=set rank=1\ncmd=set debug=0\n");
  ConnId replay = server.connect_port();
  server.receive(replay, "cmd=initack pmiid=846930886\n");
  CHECK(hooks.failures.size() == 2);
  // PMI-2 over the port: fullinit must carry the id as srcid=; pmirank= alone is refused.
  ConnId v2 = server.connect_port();
  ask(server, hooks, v2, "cmd=init pmi_version=2 pmi_subversion=0\n");
  CHECK(
      ask(server, hooks, v2, test::frame("cmd=fullinit;pmirank=0;threaded=FALSE;")).find("rc=1") !=
      std::string::npos);
  ConnId v2b = server.connect_port();
  ask(server, hooks, v2b, "cmd=init pmi_version=2 pmi_subversion=0\n");
  CHECK(ask(server, hooks, v2b, test::frame("cmd=fullinit;srcid=1804289383;threaded=FALSE;"))
            .find("rank=0;") != std::string::npos);
}

TEST_CASE("faults: EOF after init without finalize fails the launch; otherwise quiet") {
  FakeHooks hooks;
  Server server(local_launch(3), hooks);
  ConnId c0 = server.connect(0);
  ConnId c1 = server.connect(1);
  ConnId c2 = server.connect(2);
  ask(server, hooks, c0, kInit);
  ask(server, hooks, c1, kInit);
  ask(server, hooks, c2, kInit);
  ask(server, hooks, c0, "cmd=barrier_in\n");
  ask(server, hooks, c1, "cmd=barrier_in\n");
  CHECK(server.ranks_not_in_fence() == std::vector<int>{2});
  server.eof(c1);  // mid-fence
  REQUIRE(hooks.failures.size() == 1);
  CHECK(hooks.failures[0].rank == 1);
  CHECK(hooks.failures[0].message == "closed its PMI connection without finalize while in fence 1");
  CHECK(server.status()[1].state == RankState::gone);
  server.eof(c2);  // initialized, not in a fence
  REQUIRE(hooks.failures.size() == 2);
  CHECK(hooks.failures[1].message == "closed its PMI connection without finalize");
  server.eof(c2);  // twice: nothing more
  CHECK(hooks.failures.size() == 2);
}

TEST_CASE("faults: limit violations answer rc != 0 naming the limit") {
  LaunchInfo info = local_launch(1);
  info.limits.max_keys_per_rank = 2;
  FakeHooks hooks;
  Server server(info, hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  CHECK(ask(server, hooks, c, "cmd=put kvsname=job-1 key=" + std::string(65, 'k') + " value=v\n")
            .find("cmd=put_result rc=1 msg=key_\"kkkk") == 0);
  CHECK(has(
      ask(server, hooks, c, "cmd=put kvsname=job-1 key=k value=" + std::string(1025, 'v') + "\n"),
      "over_the_1024-byte_value_limit"));
  ask(server, hooks, c, "cmd=put kvsname=job-1 key=a value=1\n");
  ask(server, hooks, c, "cmd=put kvsname=job-1 key=b value=1\n");
  CHECK(ask(server, hooks, c, "cmd=put kvsname=job-1 key=c value=1\n") ==
        "cmd=put_result rc=1 msg=rank_0_already_stores_2_keys,_the_per-rank_key_limit\n");
  LaunchInfo info2 = local_launch(1);
  FakeHooks hooks2;
  Server server2(info2, hooks2);
  ConnId q = server2.connect(0);
  ask(server2, hooks2, q, frame("cmd=fullinit;"));
  CHECK(
      has(ask(server2, hooks2, q, frame("cmd=kvs-put;key=k;value=" + std::string(1025, 'v') + ";")),
          ";rc=1;errmsg=value of key \"k\" is 1025 bytes, over the 1024-byte value limit;"));
  CHECK(has(ask(server2, hooks2, q, frame("cmd=info-putnodeattr;key=a b;value=1;")),
            "errmsg=key \"a b\" holds a byte not allowed in keys;"));
  CHECK(hooks.failures.empty());
  CHECK(hooks2.failures.empty());
}

TEST_CASE("faults: a failed fence answers every parked rank with rc != 0") {
  FakeHooks hooks;
  Server server(local_launch(3), hooks);
  ConnId a = server.connect(0);  // PMI-1
  ConnId b = server.connect(1);  // PMI-2
  ConnId c = server.connect(2);  // PMI-2, late
  ask(server, hooks, a, kInit);
  ask(server, hooks, b, frame("cmd=fullinit;"));
  ask(server, hooks, c, frame("cmd=fullinit;"));
  ask(server, hooks, a, "cmd=barrier_in\n");
  ask(server, hooks, b, frame("cmd=kvs-fence;thrid=x;"));
  server.fence_failed(1, "fence 1 timed out after 30 s");
  CHECK(hooks.take_for(a) ==
        "cmd=barrier_out rc=1 msg=fence_1_failed:_fence_1_timed_out_after_30_s\n");
  CHECK(hooks.take_for(b) ==
        frame("cmd=kvs-fence-response;thrid=x;rc=1;errmsg=fence 1 failed: fence 1 timed out "
              "after 30 s;"));
  CHECK(server.status()[0].state == RankState::initialized);
  // A rank arriving late to the failed fence is refused at once; nothing is announced.
  CHECK(ask(server, hooks, c, frame("cmd=kvs-fence;")) ==
        frame("cmd=kvs-fence-response;rc=1;errmsg=fence 1 failed: fence 1 timed out after 30 s;"));
  CHECK(hooks.ready.empty());
  server.fence_complete(1, {});
  CHECK(hooks.sent.empty());
}

TEST_CASE("faults: requests after finalize are refused") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit);
  ask(server, hooks, c, "cmd=finalize\n");
  CHECK(ask(server, hooks, c, "cmd=get_appnum\n") ==
        "cmd=appnum rc=1 msg=rank_0_sent_'get_appnum'_after_finalize\n");
  CHECK(hooks.finalized == std::vector<int>{0});
}

TEST_CASE("faults: mutated real transcripts in random chunks never reach a failed client") {
  std::mt19937 rng(20240611);  // fixed: failures must reproduce
  size_t failures_seen = 0;
  for (const char* file : {"mpich-4.0.2-pmi1-4ranks.txt", "mpich-4.0.2-pmi1-pmi-port.txt",
                           "slurm-22.05-libpmi2-3ranks.txt", "mpich-4.0.2-pmi2-simple-t1.txt"}) {
    auto t = test::load_transcript(file);
    for (int round = 0; round < 50; ++round) {
      FakeHooks hooks;
      Server server(t.info, hooks);
      std::map<int, ConnId> conns;
      size_t completed = 0;
      for (const auto& step : t.steps) {
        if (step.kind == test::Step::answer) continue;
        auto it = conns.find(step.conn);
        if (it == conns.end()) {
          std::optional<int> rank;
          if (t.ranks_known) rank = t.info.local_ranks.at(static_cast<size_t>(step.conn));
          it = conns.emplace(step.conn, server.connect(rank)).first;
        }
        std::string bytes = step.bytes;
        if (!bytes.empty() && rng() % 4 == 0)
          bytes[rng() % bytes.size()] = static_cast<char>(rng() % 256);
        if (step.kind == test::Step::close) {
          server.eof(it->second);
        } else {
          for (size_t at = 0; at < bytes.size();) {
            size_t n = 1 + rng() % 16;
            server.receive(it->second, std::string_view(bytes).substr(at, n));
            at += n;
          }
        }
        while (completed < hooks.ready.size()) {
          auto [epoch, puts] = hooks.ready[completed++];
          server.fence_complete(epoch, owning_store(puts));
        }
      }
      CHECK(hooks.sends_after_failure == 0);
      std::set<ConnId> reported;
      for (const auto& f : hooks.failures) CHECK(reported.insert(f.conn).second);  // once each
      failures_seen += hooks.failures.size();
    }
  }
  CHECK(failures_seen > 0);  // the mutations do reach the failure paths
}

}  // namespace
}  // namespace lattice::pmi
