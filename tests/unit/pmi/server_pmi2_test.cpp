// The server with PMI-2 clients: the Slurm libpmi2 and MPICH pmi2/simple transcripts, liberal
// fullinit, node-attribute waits, ring across nodes, abort and unsupported commands.
#include <doctest/doctest.h>

#include "base/strings.hpp"
#include "pmi/ring.hpp"
#include "pmi_test_support.hpp"

namespace lattice::pmi {
namespace {

using test::ask;
using test::FakeHooks;
using test::frame;
using test::local_launch;

constexpr const char* kInit2 = "cmd=init pmi_version=2 pmi_subversion=0\n";

std::string fullinit_ok(int rank, int size, int appnum = 0) {
  return frame(cat("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=", rank,
                   ";size=", size, ";appnum=", appnum, ";debugged=FALSE;pmiverbose=FALSE;rc=0;"));
}

TEST_CASE("pmi2: fullinit carries each rank's own app number (MPMD)") {
  FakeHooks hooks;
  LaunchInfo info = local_launch(3);
  info.appnums = {0, 0, 2};
  Server server(info, hooks);
  for (int rank = 0; rank < 3; ++rank) {
    ConnId c = server.connect(rank);
    ask(server, hooks, c, kInit2);
    CHECK(ask(server, hooks, c, frame(cat("cmd=fullinit;pmirank=", rank, ";"))) ==
          fullinit_ok(rank, 3, rank == 2 ? 2 : 0));
  }
}

TEST_CASE("pmi2: Slurm 22.05 libpmi2 three-rank session replays byte for byte") {
  auto t = test::load_transcript("slurm-22.05-libpmi2-3ranks.txt");
  SUBCASE("whole requests") { test::replay(t); }
  SUBCASE("byte at a time") { test::replay(t, 1); }
  SUBCASE("five bytes at a time") { test::replay(t, 5); }
}

TEST_CASE("pmi2: MPICH 4.0.2 pmi2/simple (T1 junk, thrid) replays byte for byte") {
  auto t = test::load_transcript("mpich-4.0.2-pmi2-simple-t1.txt");
  test::replay(t);
  test::replay(t, 1);
}

// `count` fences of one rank, ten new keys each; every kvs-fence answered.
void fence_rounds(Server& server, FakeHooks& hooks, ConnId c, int count) {
  for (int fence = 1; fence <= count; ++fence) {
    for (int k = 0; k < 10; ++k)
      ask(server, hooks, c, frame(cat("cmd=kvs-put;key=f", fence, "-", k, ";value=v;")));
    ask(server, hooks, c, frame("cmd=kvs-fence;"));
    auto [epoch, puts] = hooks.ready.back();
    server.fence_complete(epoch, owning_store(puts));
    CHECK(hooks.take_for(c) == frame("cmd=kvs-fence-response;rc=0;"));
  }
}

ConnId initialized_rank(Server& server, FakeHooks& hooks) {
  ConnId c = server.connect(0);
  ask(server, hooks, c, kInit2);
  ask(server, hooks, c, frame("cmd=fullinit;pmirank=0;"));
  return c;
}

TEST_CASE("pmi2: a fence's store is merged through later(), after the fence's answers") {
  // Upkeep held until the test runs it, as the agent's loop runs it a turn later.
  struct DeferringHooks : FakeHooks {
    std::vector<std::function<void()>> upkeep;
    std::string sent_before;  // the last answer sent when later() was first asked
    void later(std::function<void()> fn) override {
      if (upkeep.empty() && !sent.empty()) sent_before = sent.back().bytes;
      upkeep.push_back(std::move(fn));
    }
  } hooks;
  Server server(local_launch(1), hooks);
  ConnId c = initialized_rank(server, hooks);
  fence_rounds(server, hooks, c, 12);
  CHECK(server.store_runs() == 12);  // nothing merged while the upkeep waits
  REQUIRE(hooks.upkeep.size() == 12);
  CHECK(hooks.sent_before == frame("cmd=kvs-fence-response;rc=0;"));  // the answer went first
  for (auto& upkeep : hooks.upkeep) upkeep();
  CHECK(server.store_runs() < 12);  // past eight runs the merging catches up
  CHECK(ask(server, hooks, c, frame("cmd=kvs-get;key=f1-9;")) ==
        frame("cmd=kvs-get-response;found=TRUE;value=v;rc=0;"));

  FakeHooks at_once;  // the default later() runs it at once
  Server other(local_launch(1), at_once);
  fence_rounds(other, at_once, initialized_rank(other, at_once), 12);
  CHECK(other.store_runs() < 12);
}

TEST_CASE("pmi2: fullinit accepts any subset of its fields") {
  FakeHooks hooks;
  Server server(local_launch(4), hooks);
  SUBCASE("no rank fields: the connection's rank") {
    ConnId c = server.connect(2);
    ask(server, hooks, c, kInit2);
    CHECK(ask(server, hooks, c, frame("cmd=fullinit;threaded=FALSE;")) == fullinit_ok(2, 4));
  }
  SUBCASE("srcid (PMI_ID) names the rank of an anonymous connection") {
    ConnId c = server.connect(std::nullopt);
    CHECK(ask(server, hooks, c, frame("cmd=fullinit;pmijobid=anything;srcid=3;")) ==
          fullinit_ok(3, 4));
    CHECK(hooks.initialized == std::vector<int>{3});
  }
  SUBCASE("a rank claim that contradicts the connection") {
    ConnId c = server.connect(1);
    CHECK(ask(server, hooks, c, frame("cmd=fullinit;pmirank=2;")) ==
          frame("cmd=fullinit-response;rc=1;errmsg=the connection of rank 1 claims rank 2;"));
  }
  SUBCASE("no rank anywhere") {
    ConnId c = server.connect(std::nullopt);
    CHECK(ask(server, hooks, c, frame("cmd=fullinit;threaded=TRUE;"))
              .find("cmd=fullinit-response;rc=1;errmsg=rank unknown") == 6);
  }
  SUBCASE("a rank of another node") {
    ConnId c = server.connect(std::nullopt);
    CHECK(ask(server, hooks, c, frame("cmd=fullinit;pmirank=9;")) ==
          frame("cmd=fullinit-response;rc=1;errmsg=rank 9 is not one of this node's ranks;"));
  }
  CHECK(hooks.failures.empty());
}

TEST_CASE("pmi2: getnodeattr wait=TRUE parks until the key is put on this node") {
  FakeHooks hooks;
  Server server(local_launch(3), hooks);
  std::vector<ConnId> c;
  for (int r = 0; r < 3; ++r) {
    c.push_back(server.connect(r));
    ask(server, hooks, c[r], frame("cmd=fullinit;"));
  }
  CHECK(
      ask(server, hooks, c[1], frame("cmd=info-getnodeattr;thrid=t1;key=shm;wait=TRUE;")).empty());
  CHECK(ask(server, hooks, c[2], frame("cmd=info-getnodeattr;key=shm;wait=TRUE;")).empty());
  CHECK(ask(server, hooks, c[0], frame("cmd=info-getnodeattr;key=shm;")) ==
        frame("cmd=info-getnodeattr-response;found=FALSE;rc=0;"));
  CHECK(ask(server, hooks, c[0], frame("cmd=info-putnodeattr;key=other;value=1;")) ==
        frame("cmd=info-putnodeattr-response;rc=0;"));
  CHECK(hooks.sent.empty());
  CHECK(ask(server, hooks, c[0], frame("cmd=info-putnodeattr;key=shm;value=/dev/shm/a;")) ==
        frame("cmd=info-putnodeattr-response;rc=0;"));
  CHECK(hooks.take_for(c[1]) ==
        frame("cmd=info-getnodeattr-response;thrid=t1;found=TRUE;value=/dev/shm/a;rc=0;"));
  CHECK(hooks.take_for(c[2]) ==
        frame("cmd=info-getnodeattr-response;found=TRUE;value=/dev/shm/a;rc=0;"));
  // Once put, no waiting.
  CHECK(ask(server, hooks, c[2], frame("cmd=info-getnodeattr;key=shm;wait=TRUE;")) ==
        frame("cmd=info-getnodeattr-response;found=TRUE;value=/dev/shm/a;rc=0;"));
}

TEST_CASE("pmi2: ring across nodes uses every node's inputs") {
  // World of 4; ranks 1 and 2 here, 0 and 3 elsewhere.
  LaunchInfo info;
  info.jobid = "j";
  info.world_size = 4;
  info.local_ranks = {1, 2};
  info.process_mapping = "(vector,(0,1,1),(1,1,2),(0,1,1))";
  FakeHooks hooks;
  Server server(info, hooks);
  ConnId a = server.connect(1);
  ConnId b = server.connect(2);
  ask(server, hooks, a, frame("cmd=fullinit;"));
  ask(server, hooks, b, frame("cmd=fullinit;"));
  ask(server, hooks, a, frame("cmd=ring;ring-count=1;ring-left=v1;ring-right=v1;"));
  ask(server, hooks, b, frame("cmd=ring;ring-count=1;ring-left=v;;2;ring-right=v;;2;"));
  REQUIRE(hooks.ready.size() == 1);
  KvList merged = hooks.ready[0].second;
  CHECK(merged.size() == 2);
  for (const auto& kv : merged) CHECK(is_reserved_key(kv.first));
  merged.emplace_back(ring_key(0), encode_ring_input({1, "v0", "v0"}));
  merged.emplace_back(ring_key(3), encode_ring_input({1, "v3", "v3"}));
  server.fence_complete(1, owning_store(merged));
  CHECK(hooks.take_for(a) ==
        frame("cmd=ring-response;rc=0;ring-count=1;ring-left=v0;ring-right=v;;2;"));
  CHECK(hooks.take_for(b) ==
        frame("cmd=ring-response;rc=0;ring-count=2;ring-left=v1;ring-right=v3;"));
  // The reserved entries are not gettable.
  CHECK(ask(server, hooks, a, frame("cmd=kvs-get;jobid=j;srcid=0;key=ring:0;")) ==
        frame("cmd=kvs-get-response;found=FALSE;rc=0;"));
}

TEST_CASE("pmi2: ring and kvs-fence share the epoch counter") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId a = server.connect(0);
  ConnId b = server.connect(1);
  ask(server, hooks, a, frame("cmd=fullinit;"));
  ask(server, hooks, b, frame("cmd=fullinit;"));
  ask(server, hooks, a, frame("cmd=kvs-fence;"));
  ask(server, hooks, b, frame("cmd=kvs-fence;"));
  server.fence_complete(1, owning_store(hooks.ready.at(0).second));
  hooks.take_sent();
  ask(server, hooks, a, frame("cmd=ring;ring-count=1;ring-left=x;ring-right=x;"));
  CHECK(server.status()[0].fences_entered == 2);
  CHECK(server.ranks_not_in_fence() == std::vector<int>{1});
  CHECK(ask(server, hooks, a, frame("cmd=ring;ring-count=1;ring-left=x;ring-right=x;")) ==
        frame("cmd=ring-response;rc=1;errmsg=rank 0 is already in fence 2;"));
  CHECK(ask(server, hooks, b, frame("cmd=ring;ring-count=one;ring-left=y;")) ==
        frame("cmd=ring-response;rc=1;errmsg=ring needs ring-count=N (N >= 0), ring-left= and "
              "ring-right=;"));
}

TEST_CASE("pmi2: abort carries no exit code") {
  FakeHooks hooks;
  Server server(local_launch(2), hooks);
  ConnId c = server.connect(1);
  ask(server, hooks, c, frame("cmd=fullinit;"));
  // Captured from Slurm 22.05 libpmi2: PMI2_Abort(1, "boom; really").
  CHECK(ask(server, hooks, c, "41    cmd=abort;isworld=TRUE;msg=boom;; really;").empty());
  REQUIRE(hooks.aborts.size() == 1);
  CHECK(hooks.aborts[0].rank == 1);
  CHECK_FALSE(hooks.aborts[0].exit_code.has_value());
  CHECK(hooks.aborts[0].message == "boom; really");
  server.eof(c);  // Slurm's client exits 1 right after: not a second failure
  CHECK(hooks.failures.empty());
}

TEST_CASE("pmi2: name-lookup answers value= (Slurm libpmi2 and MPICH read it)") {
  FakeHooks hooks;
  hooks.serve_names = true;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, frame("cmd=fullinit;"));
  CHECK(ask(server, hooks, c, frame("cmd=name-publish;name=svc;port=p;;q;;;infokeycount=0;"))
            .empty());
  REQUIRE(hooks.names.size() == 1);
  CHECK(hooks.names[0].port == "p;q;");
  server.name_answer(c, std::string());
  CHECK(hooks.take_for(c) == frame("cmd=name-publish-response;rc=0;"));
  CHECK(ask(server, hooks, c, frame("cmd=name-lookup;thrid=3;name=svc;infokeycount=0;")).empty());
  server.name_answer(c, std::string("p;q;"));
  CHECK(hooks.take_for(c) == frame("cmd=name-lookup-response;thrid=3;rc=0;value=p;;q;;;"));
  CHECK(ask(server, hooks, c, frame("cmd=name-unpublish;name=nope;")).empty());
  server.name_answer(c, Result<std::string>(make_error("service 'nope' is not published")));
  CHECK(hooks.take_for(c) ==
        frame("cmd=name-unpublish-response;rc=1;errmsg=service 'nope' is not published;"));
}

TEST_CASE("pmi2: spawn, job-connect, name-* unserved and unknown commands get rc != 0") {
  FakeHooks hooks;
  Server server(local_launch(1), hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, frame("cmd=fullinit;"));
  CHECK(ask(server, hooks, c, frame("cmd=name-lookup;name=svc;")) ==
        frame("cmd=name-lookup-response;rc=1;errmsg='name-lookup' is not supported by this "
              "launcher;"));
  for (std::string name : {"spawn", "job-connect", "job-disconnect"})
    CHECK(ask(server, hooks, c, frame("cmd=" + name + ";jobid=x;")) ==
          frame("cmd=" + name + "-response;rc=1;errmsg='" + name +
                "' is not supported by this launcher;"));
  CHECK(ask(server, hooks, c, frame("cmd=frob;thrid=7;")) ==
        frame("cmd=frob-response;thrid=7;rc=1;errmsg=unknown PMI-2 command 'frob';"));
  CHECK(hooks.failures.empty());
  CHECK(ask(server, hooks, c, frame("cmd=job-getid;")) ==
        frame("cmd=job-getid-response;jobid=job-1;rc=0;"));
}

TEST_CASE("pmi2: process mapping is served even when the agent passes none on one node") {
  LaunchInfo info = local_launch(3);
  info.process_mapping.clear();
  FakeHooks hooks;
  Server server(info, hooks);
  ConnId c = server.connect(0);
  ask(server, hooks, c, frame("cmd=fullinit;"));
  CHECK(ask(server, hooks, c, frame("cmd=info-getjobattr;key=PMI_process_mapping;")) ==
        frame("cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1,3));rc=0;"));
}

}  // namespace
}  // namespace lattice::pmi
