// RankSet over a real loop: stdin that came before a rank started reaches it, output comes
// back line by line and by stream, exits and closed pipes are reported, and kill reaches only
// ranks still running.
#include "agent/rank_set.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "../net/net_test_support.hpp"

using namespace lattice;
using namespace lattice::agent;
using lattice::net::test::run_until;

namespace {

LaunchSpec local_ranks(int n, int input_rank) {
  LaunchSpec spec;
  spec.launch_id = "L";
  spec.world_size = n;
  spec.rank_nodes.assign(static_cast<size_t>(n), 0);
  spec.peers = PeerTable({{"n0", "127.0.0.1", 1}});
  spec.input_rank = input_rank;
  return spec;
}

class Events : public RankSet::Events {
 public:
  void rank_output(int rank, bool is_stderr, std::string data) override {
    (is_stderr ? err : out)[rank] += data;
  }
  void rank_exited(int rank, int, net::ExitInfo info) override {
    exits[rank] = info.term_signal ? -info.term_signal : static_cast<int>(info.exit_status);
  }
  void rank_pipe_closed(int rank) override { ++pipes_closed[rank]; }
  void input_taken(uint64_t bytes) override { taken = bytes; }

  std::map<int, std::string> out, err;
  std::map<int, int> exits, pipes_closed;
  uint64_t taken = 0;
};

net::SpawnSpec shell(const std::string& script) {
  net::SpawnSpec spawn;
  spawn.file = "/bin/sh";
  spawn.argv = {"/bin/sh", "-c", script};
  spawn.env = {"PATH=/usr/bin:/bin"};
  return spawn;
}

}  // namespace

TEST_CASE("stdin held for a rank not started yet reaches it; its output comes back by stream") {
  net::Loop loop;
  auto spec = local_ranks(2, 0);
  Events events;
  RankSet ranks(spec, events);
  ranks.input("one\ntwo", false);  // before rank 0 started: held
  ranks.input("\n", true);
  auto it = ranks.begin();
  auto first = shell("cat; echo oops >&2");
  REQUIRE(ranks.start(loop, **it, first).ok());
  auto second = shell("read x || echo eof");  // rank 1 gets no stdin: /dev/null
  REQUIRE(ranks.start(loop, **++it, second).ok());
  ranks.starting_done();
  REQUIRE(run_until(loop, [&] {
    return events.exits.size() == 2 && events.pipes_closed[0] == 2 && events.pipes_closed[1] == 2;
  }));
  CHECK(events.out[0] == "one\ntwo\n");
  CHECK(events.err[0] == "oops\n");
  CHECK(events.out[1] == "eof\n");
  CHECK(events.exits[0] == 0);
  CHECK_FALSE(ranks.any_running());
  CHECK(ranks.pids().size() == 2);
}

TEST_CASE("kill reaches the ranks still running, and any_running follows their exits") {
  net::Loop loop;
  auto spec = local_ranks(2, -2);
  Events events;
  RankSet ranks(spec, events);
  auto it = ranks.begin();
  auto quick = shell("exit 3");
  REQUIRE(ranks.start(loop, **it, quick).ok());
  auto slow = shell("exec sleep 30");
  REQUIRE(ranks.start(loop, **++it, slow).ok());
  REQUIRE(run_until(loop, [&] { return events.exits.count(0) == 1; }));
  CHECK(events.exits[0] == 3);
  CHECK(ranks.any_running());
  ranks.kill(SIGTERM);
  REQUIRE(run_until(loop, [&] { return events.exits.count(1) == 1; }));
  CHECK(events.exits[1] == -SIGTERM);
  CHECK_FALSE(ranks.any_running());
}
