// LaunchHatch over a real loop: commands another node asks of this one run as real processes,
// their output and end go back to the asker in order, and a failing launch starts nothing new.
#include "agent/launch_hatch.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "../net/net_test_support.hpp"

using namespace lattice;
using namespace lattice::agent;
using lattice::net::test::run_until;

namespace {

LaunchSpec two_nodes() {
  LaunchSpec spec;
  spec.launch_id = "L";
  spec.world_size = 2;
  spec.node_index = 0;
  spec.rank_nodes = {0, 1};
  spec.peers = PeerTable({{"n0", "127.0.0.1", 1}, {"n1", "127.0.0.2", 1}});
  return spec;
}

// The launch's side: runs commands with /bin/sh, keeps what goes to other nodes.
class Host : public LaunchHatch::Host {
 public:
  explicit Host(net::Loop& loop) : loop_(loop) {}
  bool failing() const override { return failing_; }
  bool ended() const override { return false; }
  Result<std::unique_ptr<net::Process>> start_command(
      const std::string& command, const std::vector<std::pair<std::string, std::string>>&,
      std::function<void(net::ExitInfo)> on_exit) override {
    net::SpawnSpec spawn;
    spawn.file = "/bin/sh";
    spawn.argv = {"/bin/sh", "-c", command};
    spawn.env = {"PATH=/usr/bin:/bin"};
    return net::Process::spawn(loop_, spawn, std::move(on_exit));
  }
  void send_to_node(int node, rpc::Outgoing message) override {
    sent.emplace_back(node, lattice::wire::decode_exec_event(
                                message.envelope().asReader().getBody().getRemoteExecEvent()));
  }
  void commands_done() override { ++done; }

  bool failing_ = false;
  std::vector<std::pair<int, lattice::wire::ExecEvent>> sent;
  int done = 0;

 private:
  net::Loop& loop_;
};

}  // namespace

TEST_CASE("a command asked by another node runs here; its output, then its end, go back") {
  net::Loop loop;
  auto spec = two_nodes();
  Host host(loop);
  LaunchHatch hatch(loop, spec, "n0", host);
  hatch.remote_exec(1, {"L", 7, {"echo", "out;", "echo", "err", ">&2;", "exit", "3"}});
  CHECK(hatch.running());
  REQUIRE(run_until(loop, [&] { return host.done == 1; }));
  CHECK_FALSE(hatch.running());
  std::string out, err;
  for (size_t i = 0; i < host.sent.size(); ++i) {
    const auto& [node, event] = host.sent[i];
    CHECK(node == 1);
    CHECK(event.exec_id == 7);
    if (i + 1 < host.sent.size()) {
      CHECK_FALSE(event.exited);
      (event.is_stderr ? err : out) += event.data;
    }
  }
  REQUIRE_FALSE(host.sent.empty());
  CHECK(out == "out\n");
  CHECK(err == "err\n");
  const auto& end = host.sent.back().second;
  CHECK(end.exited);
  CHECK(end.exit_code == 3);
  CHECK(end.error.empty());
}

TEST_CASE("a failing launch refuses a command at once, and a kill ends one that runs") {
  net::Loop loop;
  auto spec = two_nodes();
  Host host(loop);
  LaunchHatch hatch(loop, spec, "n0", host);
  hatch.remote_exec(1, {"L", 1, {"sleep", "30"}});
  hatch.remote_exec_kill(1, 1);
  REQUIRE(run_until(loop, [&] { return host.done == 1; }));
  CHECK(host.sent.back().second.signal == 9);
  host.failing_ = true;
  hatch.remote_exec(1, {"L", 2, {"true"}});
  REQUIRE(host.sent.size() == 2);
  CHECK(host.sent.back().second.exec_id == 2);
  CHECK(host.sent.back().second.error == "launch L has ended on n0");
  CHECK_FALSE(hatch.running());
}
