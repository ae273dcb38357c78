// peer_credentials over real Unix sockets: a client in this process, a client that became
// nobody (65534) before connecting (root only), and the streams that have no credentials.
#include "net/peer_credentials.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "net/listener.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;

constexpr uid_t kNobody = 65534;

struct Accepted {
  std::vector<std::unique_ptr<Stream>> streams;
  AcceptFn fn() {
    return [this](std::unique_ptr<Stream> s) { streams.push_back(std::move(s)); };
  }
};

TEST_CASE("peer_credentials of a Unix client in this process: our pid, uid and gid") {
  Loop loop;
  test::TempDir dir;
  std::string path = dir.path() + "/creds.sock";
  Accepted accepted;
  auto listener = UnixListener::listen(loop, path, accepted.fn());
  REQUIRE(listener.ok());
  auto client = Stream::open_fd(loop, test::unix_connect(path));
  REQUIRE(client.ok());
  REQUIRE(run_until(loop, [&] { return accepted.streams.size() == 1; }));

  auto seen = peer_credentials(*accepted.streams[0]);
  REQUIRE(seen.has_value());
  CHECK(seen->pid == ::getpid());
  CHECK(seen->uid == ::geteuid());
  CHECK(seen->gid == ::getegid());
  auto back = peer_credentials(**client);  // the client sees the listening process: us too
  REQUIRE(back.has_value());
  CHECK(back->pid == ::getpid());
}

TEST_CASE("peer_credentials sees the uid a client had when it connected (root: uid 65534)") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: only root can start a client as another user");
    return;
  }
  Loop loop;
  test::TempDir dir;
  std::string path = dir.path() + "/creds.sock";
  Accepted accepted;
  auto listener = UnixListener::listen(loop, path, accepted.fn());
  REQUIRE(listener.ok());
  // The socket is 0600 in a 0700 directory: open both up so that nobody may connect.
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(path.c_str(), 0666) == 0);

  sockaddr_un addr = test::unix_address(path);
  test::ForkedClient nobody(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, kNobody,
                            kNobody);
  REQUIRE(nobody.pid() > 0);
  bool accepted_one = run_until(loop, [&] { return accepted.streams.size() == 1; });
  if (!accepted_one) FAIL("no connection from the child: " << nobody.wait());

  auto seen = peer_credentials(*accepted.streams[0]);
  REQUIRE(seen.has_value());
  CHECK(seen->pid == nobody.pid());
  CHECK(seen->uid == kNobody);
  CHECK(seen->gid == kNobody);
  accepted.streams.clear();  // the child sees EOF and exits
  CHECK(nobody.wait() == "exit 0");
}

TEST_CASE("peer_credentials is nullopt for TCP, a pipe and a closed stream; set for a socketpair") {
  Loop loop;
  Accepted accepted;
  auto listener = TcpListener::listen(loop, "127.0.0.1", 0, accepted.fn());
  REQUIRE(listener.ok());
  std::unique_ptr<Stream> tcp;
  connect_tcp(loop, "127.0.0.1", (*listener)->bound().port, [&](Result<std::unique_ptr<Stream>> r) {
    REQUIRE(r.ok());
    tcp = std::move(r.value());
  });
  REQUIRE(run_until(loop, [&] { return tcp && accepted.streams.size() == 1; }));
  CHECK(!peer_credentials(*tcp).has_value());
  CHECK(!peer_credentials(*accepted.streams[0]).has_value());

  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  UniqueFd write_end(fds[1]);
  auto pipe = Stream::open_fd(loop, UniqueFd(fds[0]));
  REQUIRE(pipe.ok());
  CHECK(!peer_credentials(**pipe).has_value());

  auto pair = make_socketpair();
  REQUIRE(pair.ok());
  auto end = Stream::open_fd(loop, std::move(pair->first));
  REQUIRE(end.ok());
  auto creds = peer_credentials(**end);  // whoever called socketpair(): this process
  REQUIRE(creds.has_value());
  CHECK(creds->pid == ::getpid());
  (*end)->close();
  CHECK((*end)->fd() == -1);
  CHECK(!peer_credentials(**end).has_value());
}

}  // namespace
}  // namespace lattice::net
