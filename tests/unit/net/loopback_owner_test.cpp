// loopback_peer_uid against the real kernel (NETLINK_SOCK_DIAG): clients in this process over
// IPv4, IPv6 and v4-mapped addresses, a client that became nobody (root only), a client that
// already closed its socket, and the connections it must refuse. peer_origin: a client's address,
// and its user when it is on this host (from any loopback address, or from the address it
// connected to).
#include "net/loopback_owner.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/address.hpp"
#include "net/listener.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;

constexpr uid_t kNobody = 65534;

struct Server {
  std::vector<std::unique_ptr<Stream>> accepted;
  std::unique_ptr<TcpListener> listener;
  // An error message, or empty once listening.
  std::string listen(Loop& loop, const std::string& host) {
    auto made = TcpListener::listen(
        loop, host, 0, [this](std::unique_ptr<Stream> s) { accepted.push_back(std::move(s)); });
    if (!made) return made.error().message;
    listener = std::move(made.value());
    return {};
  }
  int port() const { return listener->bound().port; }
};

// Connects through connect_tcp and waits for the accepted end; null on failure.
std::unique_ptr<Stream> connect_to(Loop& loop, Server& server, const std::string& host) {
  std::unique_ptr<Stream> client;
  bool done = false;
  size_t before = server.accepted.size();
  connect_tcp(loop, host, server.port(), [&](Result<std::unique_ptr<Stream>> r) {
    done = true;
    if (r.ok()) client = std::move(r.value());
  });
  bool ok = run_until(loop, [&] { return done && (!client || server.accepted.size() > before); });
  return ok && client ? std::move(client) : nullptr;
}

TEST_CASE("loopback_peer_uid of a client in this process is our uid (127.0.0.1)") {
  Loop loop;
  Server server;
  REQUIRE(server.listen(loop, "127.0.0.1").empty());
  auto client = connect_to(loop, server, "127.0.0.1");
  REQUIRE(client);
  auto uid = loopback_peer_uid(*server.accepted.at(0));
  REQUIRE_MESSAGE(uid.ok(), (uid.ok() ? "" : uid.error().message));
  CHECK(*uid == ::geteuid());
}

TEST_CASE("loopback_peer_uid over ::1, and over v4-mapped addresses on a dual-stack listener") {
  Loop loop;
  Server v6;
  if (std::string why = v6.listen(loop, "::1"); !why.empty()) {
    MESSAGE("skipped ::1: " << why);
  } else if (auto client = connect_to(loop, v6, "::1"); client) {
    auto uid = loopback_peer_uid(*v6.accepted.at(0));
    REQUIRE_MESSAGE(uid.ok(), (uid.ok() ? "" : uid.error().message));
    CHECK(*uid == ::geteuid());
  }

  Server dual;
  if (std::string why = dual.listen(loop, "::"); !why.empty()) {
    MESSAGE("skipped the dual-stack listener: " << why);
    return;
  }
  auto client = connect_to(loop, dual, "127.0.0.1");  // accepted as ::ffff:127.0.0.1
  if (!client) {
    MESSAGE("skipped: '::' does not accept IPv4 here (net.ipv6.bindv6only=1?)");
    return;
  }
  auto uid = loopback_peer_uid(*dual.accepted.at(0));
  REQUIRE_MESSAGE(uid.ok(), (uid.ok() ? "" : uid.error().message));
  CHECK(*uid == ::geteuid());
}

TEST_CASE("loopback_peer_uid names the user a forked client became (root: uid 65534)") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: only root can start a client as another user");
    return;
  }
  Loop loop;
  Server server;
  REQUIRE(server.listen(loop, "127.0.0.1").empty());
  auto addr = numeric_address("127.0.0.1", server.port());
  REQUIRE(addr.ok());
  test::ForkedClient nobody(reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_in),
                            kNobody, kNobody);
  REQUIRE(nobody.pid() > 0);
  if (!run_until(loop, [&] { return server.accepted.size() == 1; }))
    FAIL("no connection from the child: " << nobody.wait());
  auto uid = loopback_peer_uid(*server.accepted[0]);
  REQUIRE_MESSAGE(uid.ok(), (uid.ok() ? "" : uid.error().message));
  CHECK(*uid == kNobody);
  server.accepted.clear();  // the child sees EOF and exits
  CHECK(nobody.wait() == "exit 0");
}

TEST_CASE("a client that closed its socket is an error, never uid 0") {
  // Its socket lingers as an orphan or in TIME_WAIT, where the kernel reports uid 0.
  Loop loop;
  Server server;
  REQUIRE(server.listen(loop, "127.0.0.1").empty());
  auto addr = numeric_address("127.0.0.1", server.port());
  REQUIRE(addr.ok());
  UniqueFd raw(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(::connect(raw.get(), reinterpret_cast<const sockaddr*>(&addr.value()),
                    sizeof(sockaddr_in)) == 0);
  REQUIRE(run_until(loop, [&] { return server.accepted.size() == 1; }));
  raw.reset();
  auto uid = loopback_peer_uid(*server.accepted[0]);
  REQUIRE(!uid.ok());
  const std::string& why = uid.error().message;
  CHECK_MESSAGE((why.find("no process holds") != std::string::npos ||
                 why.find("no such socket") != std::string::npos),
                why);
}

// A non-loopback IPv4 address of this machine, or empty.
std::string external_ipv4() {
  uv_interface_address_t* ifs = nullptr;
  int count = 0;
  if (uv_interface_addresses(&ifs, &count) != 0) return {};
  std::string found;
  for (int i = 0; i < count && found.empty(); ++i) {
    if (ifs[i].is_internal || ifs[i].address.address4.sin_family != AF_INET) continue;
    sockaddr_storage ss{};
    std::memcpy(&ss, &ifs[i].address.address4, sizeof ifs[i].address.address4);
    if (!is_loopback(ss)) found = host_port_of(ss).host;
  }
  uv_free_interface_addresses(ifs, count);
  return found;
}

TEST_CASE("loopback_peer_uid refuses a non-loopback peer, a socketpair and a closed stream") {
  Loop loop;
  std::string external = external_ipv4();
  if (external.empty()) {
    MESSAGE("skipped the non-loopback case: this machine has no external IPv4 address");
  } else {
    Server server;
    REQUIRE(server.listen(loop, "0.0.0.0").empty());
    auto client = connect_to(loop, server, external);
    REQUIRE(client);
    auto uid = loopback_peer_uid(*server.accepted.at(0));
    REQUIRE(!uid.ok());
    CHECK(uid.error().message.find("not a loopback connection") != std::string::npos);
    CHECK(uid.error().message.find(external) != std::string::npos);
  }

  auto pair = make_socketpair();
  REQUIRE(pair.ok());
  auto unix_end = Stream::open_fd(loop, std::move(pair->first));
  REQUIRE(unix_end.ok());
  auto uid = loopback_peer_uid(**unix_end);
  REQUIRE(!uid.ok());
  CHECK(uid.error().message.find("not a TCP connection") != std::string::npos);
  (*unix_end)->close();
  CHECK(!loopback_peer_uid(**unix_end).ok());
}

// A blocking client bound to `source` before it connects to host:port; -1 on failure.
UniqueFd connect_from(const std::string& source, const std::string& host, int port) {
  auto from = numeric_address(source, 0);
  auto to = numeric_address(host, port);
  if (!from.ok() || !to.ok()) return UniqueFd();
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd ||
      ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&from.value()), sizeof(sockaddr_in)) !=
          0 ||
      ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.value()), sizeof(sockaddr_in)) != 0)
    return UniqueFd();
  return fd;
}

TEST_CASE("peer_origin: a local client is its user, from whichever loopback address") {
  Loop loop;
  Server server;
  REQUIRE(server.listen(loop, "127.0.0.1").empty());
  auto client = connect_from("127.0.0.5", "127.0.0.1", server.port());
  REQUIRE(client);
  REQUIRE(run_until(loop, [&] { return server.accepted.size() == 1; }));
  auto origin = peer_origin(*server.accepted[0]);
  REQUIRE_MESSAGE(origin.ok(), (origin.ok() ? "" : origin.error().message));
  CHECK(origin->address == "127.0.0.5");
  REQUIRE(origin->local_uid);
  CHECK(*origin->local_uid == ::geteuid());

  std::string external = external_ipv4();
  if (external.empty()) {
    MESSAGE("skipped the non-loopback cases: this machine has no external IPv4 address");
    return;
  }
  // To this host's own address: from a loopback address, or from that address itself.
  Server outside;
  REQUIRE(outside.listen(loop, external).empty());
  auto looped = connect_from("127.0.0.6", external, outside.port());
  REQUIRE(looped);
  auto direct = connect_from(external, external, outside.port());
  REQUIRE(direct);
  REQUIRE(run_until(loop, [&] { return outside.accepted.size() == 2; }));
  for (auto& accepted : outside.accepted) {
    auto o = peer_origin(*accepted);
    REQUIRE_MESSAGE(o.ok(), (o.ok() ? "" : o.error().message));
    CAPTURE(o->address);
    CHECK((o->address == "127.0.0.6" || o->address == external));
    REQUIRE(o->local_uid);
    CHECK(*o->local_uid == ::geteuid());
  }
}

TEST_CASE("peer_origin: a client gone already keeps its address, without a user") {
  Loop loop;
  Server server;
  REQUIRE(server.listen(loop, "127.0.0.1").empty());
  auto client = connect_from("127.0.0.7", "127.0.0.1", server.port());
  REQUIRE(client);
  REQUIRE(run_until(loop, [&] { return server.accepted.size() == 1; }));
  client.reset();
  auto origin = peer_origin(*server.accepted[0]);
  REQUIRE(origin.ok());
  CHECK(origin->address == "127.0.0.7");
  CHECK_FALSE(origin->local_uid);  // never uid 0 for a socket nobody holds
}

}  // namespace
}  // namespace lattice::net
