// ExecDoor on a real loop and socket, with a raw client: a request with the launch's token
// reaches the launch and its events come back; a wrong token, garbage, a message that is not a
// request, or a second request never start anything; a client that leaves is reported.
#include "agent/exec_door.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "net/loop.hpp"
#include "rpc/session.hpp"
#include "rpc/transport.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::agent {
namespace {

constexpr const char* kToken = "0123456789abcdef";

struct Fixture {
  net::Loop loop;
  std::string dir;
  std::unique_ptr<ExecDoor> door;
  std::vector<std::pair<uint64_t, wire::ExecRequest>> started;
  std::vector<uint64_t> gone;

  Fixture() {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/exec-door-test-XXXXXX";
    REQUIRE(::mkdtemp(dir.data()) != nullptr);
    ExecDoor::Hooks hooks;
    hooks.start = [this](uint64_t id, wire::ExecRequest request) -> Status {
      started.emplace_back(id, std::move(request));
      return {};
    };
    hooks.gone = [this](uint64_t id) { gone.push_back(id); };
    auto opened = ExecDoor::open(loop, dir + "/exec.sock", ::getuid(), kToken, std::move(hooks));
    REQUIRE(opened);
    door = std::move(opened.value());
  }
  ~Fixture() {
    door.reset();
    ::rmdir(dir.c_str());
  }

  int connect() {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = dir + "/exec.sock";
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
  }

  // Turns the loop (without blocking: the client's socket is not on it) until `done`, for at
  // most five seconds.
  bool run_until(const std::function<bool()>& done) {
    for (int i = 0; i < 5000 && !done(); ++i) {
      uv_run(loop.raw(), UV_RUN_NOWAIT);
      ::usleep(1000);
    }
    return done();
  }
};

class FdTransport : public rpc::ByteTransport {
 public:
  explicit FdTransport(int fd) : fd_(fd) {}
  void write(std::string bytes) override { REQUIRE(::write(fd_, bytes.data(), bytes.size()) > 0); }
  void close() override {}

 private:
  int fd_;
};

// What the client side reads: the events decoded, and whether the agent closed the stream.
struct Reader {
  int fd;
  FdTransport transport{fd};
  std::vector<wire::ExecEvent> events;
  bool eof = false;
  rpc::Session session{
      transport, rpc::Session::Handlers{
                     [this](uint64_t, schema::Envelope::Reader e) {
                       events.push_back(wire::decode_exec_event(e.getBody().getRemoteExecEvent()));
                     },
                     [](const std::string&) {}}};
  explicit Reader(int f) : fd(f) {}
  void poll() {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) eof = true;
      if (n <= 0) return;
      session.receive(std::string_view(buf, static_cast<size_t>(n)));
    }
  }
};

}  // namespace

TEST_CASE("a request with the token starts its command; events flow back, then EOF") {
  Fixture f;
  int fd = f.connect();
  Reader client(fd);
  client.session.notify(wire::exec_request({kToken, "n2", {"hostname"}}));
  REQUIRE(f.run_until([&] { return !f.started.empty(); }));
  CHECK(f.started[0].second.node == "n2");
  CHECK(f.started[0].second.command == std::vector<std::string>{"hostname"});
  uint64_t id = f.started[0].first;
  f.door->send(id, wire::ExecEvent{"L", id, false, "out\n", false, 0, 0, {}});
  f.door->send(id, wire::ExecEvent{"L", id, false, {}, true, 3, 0, {}});
  CHECK(f.run_until([&] {
    client.poll();
    return client.eof;
  }));
  REQUIRE(client.events.size() == 2);
  CHECK(client.events[0].data == "out\n");
  CHECK(client.events[1].exited);
  CHECK(client.events[1].exit_code == 3);
  CHECK(f.gone.empty());  // it ended; it did not go away
  ::close(fd);
}

TEST_CASE("a wrong token is refused with a reason and starts nothing") {
  Fixture f;
  int fd = f.connect();
  Reader client(fd);
  client.session.notify(wire::exec_request({"fedcba9876543210", "n2", {"true"}}));
  CHECK(f.run_until([&] {
    client.poll();
    return client.eof;
  }));
  CHECK(f.started.empty());
  REQUIRE(client.events.size() == 1);
  CHECK(client.events[0].exited);
  CHECK(client.events[0].error.find("token") != std::string::npos);
  ::close(fd);
}

TEST_CASE("garbage, or a message that is not a request, closes the connection") {
  Fixture f;
  int garbage = f.connect();
  REQUIRE(::write(garbage, "GET / HTTP/1.1\r\n\r\n", 18) == 18);
  Reader g(garbage);
  int other = f.connect();
  Reader o(other);
  o.session.notify(wire::exec_event({"L", 1, false, "x", true, 0, 0, {}}));
  CHECK(f.run_until([&] {
    g.poll();
    o.poll();
    return g.eof && o.eof;
  }));
  CHECK(f.started.empty());
  ::close(garbage);
  ::close(other);
}

TEST_CASE("a second request on one connection closes it; a client that leaves is reported") {
  Fixture f;
  int fd = f.connect();
  Reader client(fd);
  client.session.notify(wire::exec_request({kToken, "n1", {"sleep", "9"}}));
  client.session.notify(wire::exec_request({kToken, "n1", {"sleep", "9"}}));
  CHECK(f.run_until([&] {
    client.poll();
    return client.eof;
  }));
  CHECK(f.started.size() == 1);
  REQUIRE(f.gone.size() == 1);  // its running command must end
  CHECK(f.gone[0] == f.started[0].first);
  ::close(fd);
}

TEST_CASE("a request over the door's size bound closes the connection unread") {
  Fixture f;
  int fd = f.connect();
  Reader client(fd);
  // 300 KiB of command line: beyond any real proxy's, beyond the door's bound.
  client.session.notify(wire::exec_request({kToken, "n1", {std::string(300 * 1024, 'x')}}));
  CHECK(f.run_until([&] {
    client.poll();
    return client.eof;
  }));
  CHECK(f.started.empty());
  CHECK(client.events.empty());
  ::close(fd);
}

}  // namespace lattice::agent
