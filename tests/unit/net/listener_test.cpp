// Listeners and connect_tcp on loopback (port 0 only), Unix sockets in a fresh temp dir,
// timers and signals.
#include "net/listener.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "net/address.hpp"
#include "net/signal.hpp"
#include "net/timer.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;
using test::unix_connect;

// An echo server: every accepted Stream writes back what it reads.
struct EchoServer {
  std::vector<std::unique_ptr<Stream>> clients;
  AcceptFn acceptor() {
    return [this](std::unique_ptr<Stream> s) {
      Stream* raw = s.get();
      clients.push_back(std::move(s));
      raw->start([raw](std::string_view bytes) { raw->write(std::string(bytes)); },
                 [](const Error&) {});
    };
  }
};

TEST_CASE("TcpListener on 127.0.0.1:0 echoes through connect_tcp") {
  Loop loop;
  EchoServer server;
  auto listener = TcpListener::listen(loop, "127.0.0.1", 0, server.acceptor());
  REQUIRE(listener.ok());
  HostPort bound = (*listener)->bound();
  CHECK(bound.host == "127.0.0.1");
  REQUIRE(bound.port > 0);

  std::unique_ptr<Stream> client;
  std::string echoed;
  bool called_inside = true;
  connect_tcp(loop, "127.0.0.1", bound.port, [&](Result<std::unique_ptr<Stream>> r) {
    REQUIRE(r.ok());
    client = std::move(r.value());
  });
  called_inside = client != nullptr;
  CHECK(!called_inside);  // completion never runs inside connect_tcp()
  REQUIRE(run_until(loop, [&] { return client != nullptr; }));
  CHECK(client->peer() == "127.0.0.1:" + std::to_string(bound.port));
  client->start([&](std::string_view s) { echoed.append(s); }, [](const Error&) {});
  client->write("ping\n");
  REQUIRE(run_until(loop, [&] { return echoed == "ping\n"; }));
  REQUIRE(server.clients.size() == 1);
  CHECK(server.clients[0]->peer().rfind("127.0.0.1:", 0) == 0);
}

TEST_CASE("connect_tcp resolves names and reports refusals as errors") {
  Loop loop;
  EchoServer server;
  auto listener = TcpListener::listen(loop, "127.0.0.1", 0, server.acceptor());
  REQUIRE(listener.ok());
  int port = (*listener)->bound().port;

  std::unique_ptr<Stream> by_name;
  std::string name_error;
  connect_tcp(loop, "localhost", port, [&](Result<std::unique_ptr<Stream>> r) {
    if (r.ok())
      by_name = std::move(r.value());
    else
      name_error = r.error().message;
  });
  // localhost may resolve to ::1 first on some hosts, where nothing listens: accept either.
  REQUIRE(run_until(loop, [&] { return by_name || !name_error.empty(); }));
  if (!by_name) CHECK(name_error.find("localhost") != std::string::npos);

  listener.value().reset();  // the port is free again: connecting is refused
  std::string refused;
  connect_tcp(loop, "127.0.0.1", port, [&](Result<std::unique_ptr<Stream>> r) {
    REQUIRE(!r.ok());
    refused = r.error().message;
  });
  REQUIRE(run_until(loop, [&] { return !refused.empty(); }));
  CHECK(refused.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);

  std::string unresolvable;
  connect_tcp(loop, "no-such-host.invalid", 1, [&](Result<std::unique_ptr<Stream>> r) {
    REQUIRE(!r.ok());
    unresolvable = r.error().message;
  });
  REQUIRE(run_until(loop, [&] { return !unresolvable.empty(); }));
  CHECK(unresolvable.find("cannot resolve") != std::string::npos);
}

TEST_CASE("a pending connect is dropped, not completed, when the Loop goes away") {
  bool called = false;
  {
    Loop loop;
    connect_tcp(loop, "localhost", 9, [&](Result<std::unique_ptr<Stream>>) { called = true; });
    connect_tcp(loop, "127.0.0.1", 9, [&](Result<std::unique_ptr<Stream>>) { called = true; });
    connect_tcp(loop, "127.0.0.1", 70000, [&](Result<std::unique_ptr<Stream>>) { called = true; });
  }
  CHECK(!called);
}

TEST_CASE("TcpListener refuses a non-numeric host and a taken port") {
  Loop loop;
  auto bad = TcpListener::listen(loop, "not-an-ip", 0, [](std::unique_ptr<Stream>) {});
  REQUIRE(!bad.ok());
  CHECK(bad.error().message.find("not-an-ip") != std::string::npos);
  auto first = TcpListener::listen(loop, "127.0.0.1", 0, [](std::unique_ptr<Stream>) {});
  REQUIRE(first.ok());
  auto second = TcpListener::listen(loop, "127.0.0.1", (*first)->bound().port,
                                    [](std::unique_ptr<Stream>) {});
  CHECK(!second.ok());
}

TEST_CASE("UnixListener: mode 0600, echo, refuses a live path, removed afterwards") {
  Loop loop;
  test::TempDir dir;
  std::string path = dir.path() + "/agent.sock";
  EchoServer server;
  {
    auto listener = UnixListener::listen(loop, path, server.acceptor());
    REQUIRE(listener.ok());
    CHECK((*listener)->path() == path);
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);

    auto twin = UnixListener::listen(loop, path, server.acceptor());
    REQUIRE(!twin.ok());
    CHECK(twin.error().message.find("in use") != std::string::npos);
    CHECK(::access(path.c_str(), F_OK) == 0);  // the refused twin left the live socket alone

    auto client = Stream::open_fd(loop, unix_connect(path));
    REQUIRE(client.ok());
    std::string echoed;
    (*client)->start([&](std::string_view s) { echoed.append(s); }, [](const Error&) {});
    (*client)->write("over unix");
    REQUIRE(run_until(loop, [&] { return echoed == "over unix"; }));
    CHECK(server.clients.at(0)->peer() == "unix");
  }
  CHECK(::access(path.c_str(), F_OK) != 0);
}

TEST_CASE("UnixListener replaces a stale socket file and refuses a regular file") {
  Loop loop;
  test::TempDir dir;
  std::string path = dir.path() + "/stale.sock";
  {
    // A socket file whose server is gone: bind a raw socket and close it without unlinking.
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  REQUIRE(::access(path.c_str(), F_OK) == 0);
  auto listener = UnixListener::listen(loop, path, [](std::unique_ptr<Stream>) {});
  CHECK(listener.ok());

  std::string file = dir.path() + "/plain";
  std::ofstream(file) << "not a socket";
  auto refused = UnixListener::listen(loop, file, [](std::unique_ptr<Stream>) {});
  REQUIRE(!refused.ok());
  CHECK(refused.error().message.find("not a socket") != std::string::npos);
  CHECK(::access(file.c_str(), F_OK) == 0);

  auto too_long = UnixListener::listen(loop, dir.path() + "/" + std::string(200, 'x'),
                                       [](std::unique_ptr<Stream>) {});
  CHECK(!too_long.ok());
}

TEST_CASE("a listener destroyed inside its accept callback accepts nothing more") {
  Loop loop;
  std::unique_ptr<TcpListener> listener;
  std::vector<std::unique_ptr<Stream>> accepted;
  auto made = TcpListener::listen(loop, "127.0.0.1", 0, [&](std::unique_ptr<Stream> s) {
    accepted.push_back(std::move(s));
    listener.reset();
  });
  REQUIRE(made.ok());
  listener = std::move(made.value());
  int port = listener->bound().port;
  int done = 0;
  std::vector<std::unique_ptr<Stream>> clients;
  for (int i = 0; i < 3; ++i)
    connect_tcp(loop, "127.0.0.1", port, [&](Result<std::unique_ptr<Stream>> r) {
      if (r.ok()) clients.push_back(std::move(r.value()));
      ++done;
    });
  REQUIRE(run_until(loop, [&] { return done == 3 && !listener; }));
  CHECK(accepted.size() == 1);
}

TEST_CASE("a backlog of connections is accepted a turn at a time; timers run in between") {
  Loop loop;
  std::vector<std::unique_ptr<Stream>> accepted;
  std::unique_ptr<Timer> timer;
  size_t accepted_when_timer_ran = 0;
  auto made = TcpListener::listen(loop, "127.0.0.1", 0, [&](std::unique_ptr<Stream> s) {
    accepted.push_back(std::move(s));
    if (timer) return;
    timer = std::make_unique<Timer>(loop);  // due at once: runs when the loop gets its turn
    timer->start(0, 0, [&] { accepted_when_timer_ran = accepted.size(); });
  });
  REQUIRE(made.ok());
  auto addr = numeric_address("127.0.0.1", made.value()->bound().port);
  REQUIRE(addr.ok());
  // Three turns' worth, all in the kernel's backlog before the loop runs.
  constexpr size_t kClients = 3 * detail::Acceptor::kAcceptsPerTurn;
  std::vector<UniqueFd> clients;
  for (size_t i = 0; i < kClients; ++i) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.value()),
                      sizeof(sockaddr_in)) == 0);
    clients.push_back(std::move(fd));
  }
  REQUIRE(run_until(loop, [&] { return accepted.size() == kClients; }));
  CHECK(accepted_when_timer_ran > 0);
  CHECK(accepted_when_timer_ran <= static_cast<size_t>(detail::Acceptor::kAcceptsPerTurn));
}

TEST_CASE("Timer: one-shot, repeating, stopped, and destroyed inside its callback") {
  Loop loop;
  int once = 0, repeats = 0;
  Timer one(loop), rep(loop);
  one.start(1, 0, [&] { ++once; });
  rep.start(1, 1, [&] {
    if (++repeats == 3) rep.stop();
  });
  CHECK(rep.active());
  loop.run();
  CHECK(once == 1);
  CHECK(repeats == 3);
  CHECK(!rep.active());

  auto self_destroying = std::make_unique<Timer>(loop);
  int fired = 0;
  self_destroying->start(0, 1, [&] {
    ++fired;
    self_destroying.reset();
  });
  loop.run();
  CHECK(fired == 1);

  int never = 0;
  {
    Timer dropped(loop);
    dropped.start(0, 0, [&] { ++never; });
  }
  loop.run();
  CHECK(never == 0);
}

TEST_CASE("SignalWatcher delivers a signal on the loop") {
  Loop loop;
  int got = 0;
  SignalWatcher watcher(loop, SIGUSR1, [&](int signum) { got = signum; });
  ::raise(SIGUSR1);
  REQUIRE(run_until(loop, [&] { return got != 0; }));
  CHECK(got == SIGUSR1);
}

}  // namespace
}  // namespace lattice::net
