// A launch's wire-up parts over a real loop: the PMI backend's socket door, its fence through
// the launch's fence and back, name publishing at the head, a lost rank; and the fence's
// deadline and stragglers as the backend reports its ranks.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../net/net_test_support.hpp"
#include "agent/launch_fence.hpp"
#include "agent/launch_names.hpp"
#include "agent/pmi_wire_up.hpp"
#include "agent/socket_dir.hpp"
#include "base/clock.hpp"

using namespace lattice;
using namespace lattice::agent;
using lattice::net::test::run_until;

namespace {

LaunchSpec one_node(int ranks) {
  LaunchSpec spec;
  spec.launch_id = "L";
  spec.world_size = ranks;
  spec.rank_nodes.assign(static_cast<size_t>(ranks), 0);
  spec.peers = PeerTable({{"n0", "127.0.0.1", 1}});
  spec.user.uid = ::getuid();
  spec.user.gid = ::getgid();
  spec.fence_timeout_ms = 1000;
  return spec;
}

// A single-node launch makes no links: nothing here is ever called.
class NoLinks : public NodeLinks::Host {
 public:
  uint64_t link_made(std::unique_ptr<net::Stream>) override { return 0; }
  link::Connection* connection(uint64_t) override { return nullptr; }
  void drop(uint64_t, const std::string&) override {}
};

// What the launch hears; a fence entered goes to the launch's fence, as Launch does.
class Events : public WireUpEvents {
 public:
  void rank_initialized(int rank) override { initialized.push_back(rank); }
  void rank_finalized(int rank) override { finalized.push_back(rank); }
  void fence_entered(uint64_t epoch, pmi::KvList contribution) override {
    entered.push_back(epoch);
    if (fence) fence->enter(epoch, std::move(contribution));
  }
  void rank_aborted(int, std::optional<int>, std::string) override {}
  void rank_failed(int rank, std::string message, bool lost) override {
    failed.push_back(cat(rank, lost ? " lost: " : " error: ", message));
  }
  void fence_unusable(uint64_t, std::string) override {}
  void rank_notice(int, std::string) override {}
  void spawn_requested(wire::SpawnRequest, std::function<void(Result<std::string>)>) override {}
  void signal_ranks(const std::vector<int>&, int) override {}
  void after_notice(std::function<void()> then) override { then(); }

  LaunchFence* fence = nullptr;
  std::vector<int> initialized, finalized;
  std::vector<uint64_t> entered;
  std::vector<std::string> failed;
};

// A blocking PMI-1 client on the launch's socket, as a rank that found PMI_FD unset would be.
struct Client {
  net::UniqueFd fd;
  void say(const std::string& line) { REQUIRE(::write(fd.get(), line.data(), line.size()) > 0); }
  std::string pending;
  std::string read_line(net::Loop& loop) {
    // Idempotent: run_until may ask once more after it holds.
    auto have_line = [&] {
      char buf[256];
      ssize_t n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) pending.append(buf, static_cast<size_t>(n));
      return pending.find('\n') != std::string::npos;
    };
    REQUIRE(run_until(loop, have_line));
    size_t end = pending.find('\n') + 1;
    std::string line = pending.substr(0, end);
    pending.erase(0, end);
    return line;
  }
};

struct Fixture {
  net::Loop loop;
  net::test::TempDir tmp;
  std::unique_ptr<SocketDir> sockets = SocketDir::claim(tmp.path() + "/s").value();
  LaunchDir dir = sockets->make_launch_dir(::getuid(), ::getgid(), false).value();
  LaunchSpec spec;
  MonotonicClock clock;
  NoLinks no_links;
  NodeLinks links{loop, no_links, {}, [](auto&, auto&, bool) {}};
  LaunchNames names{loop, spec, links, launch_proc_nodes(spec), nullptr};
  Events events;
  PmiWireUp pmi{loop, spec, clock, names, events};
  LaunchFence fence{loop,
                    spec,
                    pmi,
                    [] { return uint64_t{1}; },
                    [](const std::vector<int>&, rpc::Outgoing) {},
                    [](uint64_t, const std::string&) {}};

  explicit Fixture(int ranks) : spec(one_node(ranks)) {
    events.fence = &fence;
    REQUIRE(pmi.open(dir).ok());
    REQUIRE(dir.hand_over().ok());
  }
  Client rank(int rank) {
    Client c{net::test::unix_connect(dir.entry("pmi.sock")), {}};
    REQUIRE(c.fd);
    c.say(cat("cmd=initack pmiid=", rank, "\n"));
    CHECK(c.read_line(loop) == "cmd=initack\n");
    for (int i = 0; i < 3; ++i) c.read_line(loop);  // size, rank, debug
    c.say("cmd=init pmi_version=1 pmi_subversion=1\n");
    CHECK(c.read_line(loop).find("rc=0") != std::string::npos);
    return c;
  }
};

}  // namespace

TEST_CASE("PMI ranks on the socket fence through the launch's fence and are released") {
  Fixture f(2);
  Client a = f.rank(0), b = f.rank(1);
  CHECK(f.events.initialized == std::vector<int>{0, 1});
  a.say("cmd=put kvsname=L key=a value=1\n");
  CHECK(a.read_line(f.loop).find("rc=0") != std::string::npos);
  a.say("cmd=barrier_in\n");
  REQUIRE(run_until(f.loop, [&] { return f.pmi.fence_waiting().has_value(); }));
  CHECK(f.pmi.fence_waiting()->epoch == 1);
  CHECK(f.pmi.ranks_not_in_fence() == std::vector<int>{1});
  // Rank 1 never entered: it is the straggler of fence 1, rank 0 is not.
  auto late = f.fence.stragglers(1, f.clock.now_ms());
  REQUIRE(late.size() == 1);
  CHECK(late[0].rank == 1);
  CHECK(late[0].last_command == "init");
  b.say("cmd=barrier_in\n");
  CHECK(a.read_line(f.loop) == "cmd=barrier_out\n");
  CHECK(b.read_line(f.loop) == "cmd=barrier_out\n");
  CHECK(f.events.entered == std::vector<uint64_t>{1});
  CHECK_FALSE(f.pmi.fence_waiting());
  CHECK(f.fence.phases().fences().back().released_us != 0);
  b.say("cmd=get kvsname=L key=a\n");
  CHECK(b.read_line(f.loop).find("value=1") != std::string::npos);
}

TEST_CASE("a fence past the launch's deadline is overdue, and failing it answers the ranks") {
  Fixture f(2);
  Client a = f.rank(0), b = f.rank(1);
  a.say("cmd=barrier_in\n");
  REQUIRE(run_until(f.loop, [&] { return f.pmi.fence_waiting().has_value(); }));
  uint64_t since = f.pmi.fence_waiting()->since_ms;
  CHECK_FALSE(f.fence.overdue(since + f.spec.fence_timeout_ms - 1));
  REQUIRE(f.fence.overdue(since + f.spec.fence_timeout_ms) == std::optional<uint64_t>(1));
  f.fence.fail(1, "fence 1 timed out");
  // PMI-1 values cannot hold spaces.
  CHECK(a.read_line(f.loop) == "cmd=barrier_out rc=1 msg=fence_1_failed:_fence_1_timed_out\n");
  CHECK_FALSE(f.pmi.fence_waiting());
}

TEST_CASE("names published at the head are answered on a later turn; a lost rank is reported") {
  Fixture f(1);
  Client a = f.rank(0);
  a.say("cmd=publish_name service=svc port=tcp://x\n");
  CHECK(a.read_line(f.loop).find("rc=0") != std::string::npos);
  a.say("cmd=lookup_name service=svc\n");
  CHECK(a.read_line(f.loop).find("port=tcp://x") != std::string::npos);
  a.fd.reset();  // gone without finalize
  REQUIRE(run_until(f.loop, [&] { return !f.events.failed.empty(); }));
  CHECK(f.events.failed[0].rfind("0 lost: ", 0) == 0);
}

TEST_CASE("another user at the socket is refused before PMI sees a byte") {
  if (::getuid() != 0) return;  // needs root to pose as another user
  Fixture f(1);
  auto addr = net::test::unix_address(f.dir.entry("pmi.sock"));
  // The directory keeps uid 65534 out in practice; the door's own check is what holds here.
  ::chmod(f.tmp.path().c_str(), 0711);
  ::chmod(f.dir.path().c_str(), 0755);
  ::chmod(f.dir.entry("pmi.sock").c_str(), 0777);
  net::test::ForkedClient stranger(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, 65534,
                                   65534);
  // It exits once the agent closes its connection (the loop must run for that).
  REQUIRE(run_until(f.loop, [&] {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(stranger.pid()), &info, WEXITED | WNOHANG | WNOWAIT) ==
               0 &&
           info.si_pid == stranger.pid();
  }));
  CHECK(stranger.wait() == "exit 0");
  CHECK(f.events.initialized.empty());
  CHECK(f.events.failed.empty());
}
