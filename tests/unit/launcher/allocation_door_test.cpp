// The user door from the launcher's side: which nodes a launch inside an allocation takes
// (door_nodes), where the door is (user_door_path), and ask_allocation against a fake agent on
// a Unix socket in a temp dir, served by a thread: its answer, an error, something else, a
// hang-up, and a socket served by another user.
#include "launcher/allocation_door.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../net/net_test_support.hpp"
#include "launcher/local_socket.hpp"
#include "rpc/session.hpp"

using namespace lattice;
using namespace lattice::launcher;
using lattice::net::test::TempDir;

namespace {

wire::AllocationInfo four_nodes(uint32_t node_index) {
  wire::AllocationInfo info;
  info.id = "A-1";
  info.user = wire::JobUser{1001, 1001, std::nullopt, "alice"};
  info.nodes = {{"n0", "10.0.0.0", 7400},
                {"n1", "10.0.0.1", 7401},
                {"n2", "10.0.0.2", 7402},
                {"n3", "10.0.0.3", 7403}};
  info.node_index = node_index;
  return info;
}

std::vector<std::string> ids(const std::vector<AgentAddress>& agents) {
  std::vector<std::string> out;
  for (const auto& a : agents) out.push_back(a.node_id);
  return out;
}

// Sets (or, given nullopt, unsets) LATTICE_USER_SOCKET for one scope, then puts it back.
class DoorVariable {
 public:
  explicit DoorVariable(const std::optional<std::string>& value) {
    if (const char* old = std::getenv("LATTICE_USER_SOCKET")) saved_ = old;
    if (value)
      ::setenv("LATTICE_USER_SOCKET", value->c_str(), 1);
    else
      ::unsetenv("LATTICE_USER_SOCKET");
  }
  ~DoorVariable() {
    if (saved_)
      ::setenv("LATTICE_USER_SOCKET", saved_->c_str(), 1);
    else
      ::unsetenv("LATTICE_USER_SOCKET");
  }
  DoorVariable(const DoorVariable&) = delete;
  DoorVariable& operator=(const DoorVariable&) = delete;

 private:
  std::optional<std::string> saved_;
};

net::UniqueFd listen_unix(const std::string& path) {
  net::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr = net::test::unix_address(path);
  REQUIRE(fd);
  REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd.get(), 4) == 0);
  return fd;
}

// A fake agent on a Unix socket: a thread that takes one connection, reads the request with a
// plain rpc::Session, records what was asked and lets `answer` respond (or not), then closes.
class FakeDoor {
 public:
  using Answer = std::function<void(rpc::Session&, uint64_t request_id)>;

  FakeDoor(const std::string& path, Answer answer)
      : listener_(listen_unix(path)), answer_(std::move(answer)), thread_([this] { serve(); }) {}
  ~FakeDoor() { join(); }
  // Waits for the thread; what it recorded may be read after.
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  FakeDoor(const FakeDoor&) = delete;
  FakeDoor& operator=(const FakeDoor&) = delete;

  // Read after join().
  int requests = 0;
  std::optional<schema::Envelope::Body::Which> body;
  std::string asked_id;
  bool asked_user = true;

 private:
  void serve() {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 10000) != 1) return;  // the client never came: the test fails on its own
    net::UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) return;
    SocketTransport transport(conn.get());
    bool done = false;
    rpc::Session session(
        transport, rpc::Session::Handlers{[&](uint64_t id, schema::Envelope::Reader envelope) {
                                            ++requests;
                                            body = envelope.getBody().which();
                                            if (envelope.getBody().isAllocationInfo()) {
                                              auto info = envelope.getBody().getAllocationInfo();
                                              asked_id = info.getAllocationId().cStr();
                                              asked_user = info.hasUser();
                                            }
                                            answer_(session, id);
                                            done = true;
                                          },
                                          {}});
    char buffer[4096];
    while (!done) {
      ssize_t n = ::read(conn.get(), buffer, sizeof buffer);
      if (n <= 0) break;
      session.receive(std::string_view(buffer, static_cast<size_t>(n)));
    }
  }

  net::UniqueFd listener_;
  Answer answer_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("door nodes: the asking node first, then the others in the allocation's order") {
  auto all = door_nodes(four_nodes(2), 0);
  REQUIRE(all);
  CHECK(ids(*all) == std::vector<std::string>{"n2", "n0", "n1", "n3"});
  for (const auto& a : *all) CHECK(a.name_known);
  CHECK((*all)[0].host == "10.0.0.2");
  CHECK((*all)[0].port == 7402);
  CHECK((*all)[3].host == "10.0.0.3");
  CHECK((*all)[3].port == 7403);

  auto first = door_nodes(four_nodes(0), 0);
  REQUIRE(first);
  CHECK(ids(*first) == std::vector<std::string>{"n0", "n1", "n2", "n3"});
  auto last = door_nodes(four_nodes(3), 0);
  REQUIRE(last);
  CHECK(ids(*last) == std::vector<std::string>{"n3", "n0", "n1", "n2"});

  wire::AllocationInfo one = four_nodes(0);
  one.nodes.resize(1);
  auto single = door_nodes(one, 0);
  REQUIRE(single);
  CHECK(ids(*single) == std::vector<std::string>{"n0"});
  auto single_n1 = door_nodes(one, 1);
  REQUIRE(single_n1);
  CHECK(ids(*single_n1) == std::vector<std::string>{"n0"});
}

TEST_CASE("door nodes: -N K takes the first K of that order") {
  for (int k = 1; k <= 4; ++k) {
    auto some = door_nodes(four_nodes(1), k);
    REQUIRE(some);
    const std::vector<std::string> order{"n1", "n0", "n2", "n3"};
    CHECK(ids(*some) == std::vector<std::string>(order.begin(), order.begin() + k));
  }
  auto one = door_nodes(four_nodes(3), 1);
  REQUIRE(one);
  CHECK(ids(*one) == std::vector<std::string>{"n3"});  // always the asking node
}

TEST_CASE("door nodes: -N beyond the allocation is refused") {
  auto more = door_nodes(four_nodes(0), 5);
  REQUIRE_FALSE(more);
  CHECK(more.error().message == "-N 5: allocation A-1 holds 4 nodes");
  auto far_more = door_nodes(four_nodes(2), 65536);
  REQUIRE_FALSE(far_more);
  CHECK(far_more.error().message.find("holds 4 nodes") != std::string::npos);
}

TEST_CASE("the user door is $LATTICE_USER_SOCKET, else the agent's default") {
  {
    DoorVariable set(std::string("/tmp/alloc-7/user.sock"));
    CHECK(user_door_path() == "/tmp/alloc-7/user.sock");
  }
  {
    DoorVariable empty(std::string(""));
    CHECK(user_door_path() == "/run/lattice/user.sock");
  }
  {
    DoorVariable unset(std::nullopt);
    CHECK(user_door_path() == "/run/lattice/user.sock");
  }
}

TEST_CASE("ask_allocation: the agent's description of the allocation") {
  TempDir dir;
  const std::string path = dir.path() + "/user.sock";
  wire::AllocationInfo sent = four_nodes(1);
  sent.user.groups = std::vector<uint32_t>{1001, 27};
  sent.remaining_ms = 1234;
  sent.slurm_compat = true;
  sent.has_cxi = true;
  FakeDoor door(path,
                [&](rpc::Session& s, uint64_t id) { s.respond(id, wire::allocation_info(sent)); });
  auto got = ask_allocation(path, "A-1");
  door.join();
  CHECK(door.requests == 1);
  CHECK(door.body == schema::Envelope::Body::ALLOCATION_INFO);
  CHECK(door.asked_id == "A-1");
  CHECK_FALSE(door.asked_user);  // the request names the allocation only
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->id == "A-1");
  CHECK(got->user.uid == 1001);
  CHECK(got->user.name == "alice");
  CHECK(got->user.groups == sent.user.groups);
  REQUIRE(got->nodes.size() == 4);
  CHECK(got->nodes[3].host == "10.0.0.3");
  CHECK(got->node_index == 1);
  CHECK(got->remaining_ms == 1234);
  CHECK(got->slurm_compat);
  CHECK(got->has_cxi);
  auto nodes = door_nodes(*got, 0);
  REQUIRE(nodes);
  CHECK(ids(*nodes) == std::vector<std::string>{"n1", "n0", "n2", "n3"});
}

TEST_CASE("ask_allocation: the agent's refusal is the error") {
  TempDir dir;
  const std::string path = dir.path() + "/user.sock";
  FakeDoor door(path, [](rpc::Session& s, uint64_t id) {
    s.respond_error(id, "allocation A-2: no such allocation of uid 1001");
  });
  auto got = ask_allocation(path, "A-2");
  door.join();
  CHECK(door.asked_id == "A-2");
  REQUIRE_FALSE(got);
  CHECK(got.error().message == "allocation A-2: no such allocation of uid 1001");
  CHECK(got.error().kind == ErrorKind::refused);
}

TEST_CASE("ask_allocation: an answer of another kind, or one no agent could hold, is an error") {
  TempDir dir;
  {
    const std::string path = dir.path() + "/other.sock";
    FakeDoor door(path, [](rpc::Session& s, uint64_t id) {
      rpc::Outgoing msg;
      msg.body().initLaunchAccepted().setNodeId("n0");
      s.respond(id, std::move(msg));
    });
    auto got = ask_allocation(path, "A-1");
    door.join();
    REQUIRE_FALSE(got);
    CHECK(got.error().message == "the agent answered with something else");
  }
  {
    const std::string path = dir.path() + "/empty.sock";
    FakeDoor door(path, [](rpc::Session& s, uint64_t id) { s.respond(id, rpc::Outgoing()); });
    auto got = ask_allocation(path, "A-1");
    door.join();
    REQUIRE_FALSE(got);
    CHECK(got.error().message == "the agent answered with something else");
  }
  {
    const std::string path = dir.path() + "/bad.sock";
    FakeDoor door(path, [](rpc::Session& s, uint64_t id) {
      wire::AllocationInfo info = four_nodes(4);  // beyond its nodes
      s.respond(id, wire::allocation_info(info));
    });
    auto got = ask_allocation(path, "A-1");
    door.join();
    REQUIRE_FALSE(got);
    CHECK(got.error().message == "node index 4 of 4 nodes");
  }
}

TEST_CASE("ask_allocation: an agent that hangs up without answering") {
  TempDir dir;
  const std::string path = dir.path() + "/user.sock";
  FakeDoor door(path, [](rpc::Session&, uint64_t) {});
  auto got = ask_allocation(path, "A-1");
  door.join();
  CHECK(door.requests == 1);
  REQUIRE_FALSE(got);
  CHECK(got.error().message == "the agent at " + path + " closed the connection");
}

TEST_CASE("ask_allocation: no agent at the path, or a path no socket can have") {
  TempDir dir;
  auto none = ask_allocation(dir.path() + "/nobody.sock", "A-1");
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("cannot reach the agent's user door at " + dir.path() +
                                  "/nobody.sock") != std::string::npos);
  auto empty = ask_allocation("", "A-1");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message.find("is empty or too long") != std::string::npos);
  auto long_path = ask_allocation("/" + std::string(200, 'x'), "A-1");
  REQUIRE_FALSE(long_path);
  CHECK(long_path.error().message.find("is empty or too long") != std::string::npos);
}

// The door must be the agent's: served by root or by the asking user. A socket that another
// user listens on is refused before anything is sent. The listener is a forked child that drops
// to nobody (65534) before it makes its socket: this needs root.
TEST_CASE("ask_allocation: a door served by another user is not taken for the agent's") {
  if (::getuid() != 0) {
    MESSAGE("skipped: needs root to serve a socket as another uid");
    return;
  }
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
  const std::string path = dir.path() + "/user.sock";
  const sockaddr_un addr = net::test::unix_address(path);
  int ready[2];
  REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Async-signal-safe calls only: the parent may have threads.
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(10);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, 4) != 0)
      _exit(11);
    if (::write(ready[1], "r", 1) != 1) _exit(12);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  const bool listening = ::read(ready[0], &byte, 1) == 1;
  ::close(ready[0]);
  std::optional<Result<wire::AllocationInfo>> got;
  if (listening) got = ask_allocation(path, "A-1");
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE_MESSAGE(listening, "the child could not listen as uid 65534 (exit ",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1, ")");
  REQUIRE_FALSE(*got);
  CHECK(got->error().message == "the agent's user door at " + path +
                                    " is served by uid 65534, not by an agent (root or uid 0)");
}
