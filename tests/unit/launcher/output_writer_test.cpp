// The launcher's stdout/stderr writer: a pipe is written without blocking through its own
// description (the original keeps its blocking mode), what the reader has not taken is queued
// and reported drained once taken; a regular file is written at once. A reader that went away
// (EPIPE) is said once, from the loop, and nothing stays queued for it.
#include "launcher/output_writer.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "../net/net_test_support.hpp"

using lattice::launcher::OutputWriter;
using lattice::net::Loop;
using lattice::net::test::run_until;

TEST_CASE("a pipe nobody reads queues the rest and drains once read; its fd stays blocking") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string big(size_t{4} << 20, 'x');  // more than a pipe holds, deepened or not
  std::string got;
  {
    Loop loop;
    OutputWriter writer(loop, fds[1]);
    writer.write(big);
    CHECK(writer.queued_bytes() > 0);  // it returned instead of waiting for a reader
    CHECK((::fcntl(fds[1], F_GETFL) & O_NONBLOCK) == 0);
    bool drained = false;
    writer.when_drained([&] {
      drained = true;
      loop.stop();
    });
    std::thread reader([&] {  // the slow reader, on its own
      char buf[4096];
      ssize_t n;
      while (got.size() < big.size() && (n = ::read(fds[0], buf, sizeof buf)) > 0)
        got.append(buf, static_cast<size_t>(n));
    });
    loop.run();
    reader.join();
    CHECK(drained);
    CHECK(writer.queued_bytes() == 0);
  }
  CHECK(got == big);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("two descriptors of one pipe (2>&1) share a writer: chunks stay whole and in order") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  int also = ::dup(fds[1]);
  REQUIRE(also >= 0);
  const std::string big(size_t{4} << 20, 'o');
  std::string got;
  {
    Loop loop;
    OutputWriter out(loop, fds[1]);
    OutputWriter err(loop, also, &out);
    out.write(big);
    err.write("err\n");              // queued behind the rest of `big`, not written into the gap
    CHECK(err.queued_bytes() == 0);  // counted once, by `out`
    err.when_drained([&] { loop.stop(); });
    std::thread reader([&] {
      char buf[4096];
      ssize_t n;
      while (got.size() < big.size() + 4 && (n = ::read(fds[0], buf, sizeof buf)) > 0)
        got.append(buf, static_cast<size_t>(n));
    });
    loop.run();
    reader.join();
  }
  CHECK(got == big + "err\n");
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(also);
}

TEST_CASE("a regular file is written at once") {
  char path[] = "/tmp/lattice-writerXXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  Loop loop;
  OutputWriter writer(loop, fd);
  writer.write("hello\n");
  CHECK(writer.queued_bytes() == 0);
  bool drained = false;
  writer.when_drained([&] { drained = true; });
  CHECK(drained);
  char buf[16] = {};
  CHECK(::pread(fd, buf, sizeof buf, 0) == 6);
  CHECK(std::string(buf) == "hello\n");
  ::close(fd);
  ::unlink(path);
}

TEST_CASE("a pipe whose reader went away: said once, from the loop; nothing waits for it") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  Loop loop;
  OutputWriter writer(loop, fds[1]);
  int gone = 0;
  writer.on_reader_gone([&] { ++gone; });
  writer.write(std::string(size_t{4} << 20, 'x'));  // queued: nobody reads yet
  REQUIRE(writer.queued_bytes() > 0);
  bool drained = false;
  writer.when_drained([&] { drained = true; });
  ::close(fds[0]);  // the reader goes, with 4 MiB still queued for it
  writer.write("more");
  CHECK(gone == 0);  // never from inside write()
  CHECK(run_until(loop, [&] { return gone && drained; }));
  CHECK(gone == 1);
  CHECK(drained);  // whoever waited for the queue goes on
  CHECK(writer.queued_bytes() == 0);
  writer.write("and more");  // dropped, and not said again
  bool again = false;
  writer.when_drained([&] { again = true; });
  CHECK(run_until(loop, [&] { return again; }));
  CHECK(gone == 1);
  ::close(fds[1]);
}

TEST_CASE("a socket whose reader went away (written at once) is said the same way") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Loop loop;
  OutputWriter writer(loop, sv[0]);
  int gone = 0;
  writer.on_reader_gone([&] { ++gone; });
  ::close(sv[1]);
  writer.write("hello\n");
  CHECK(gone == 0);
  CHECK(run_until(loop, [&] { return gone > 0; }));
  writer.write("again\n");
  run_until(
      loop, [] { return false; }, 100);
  CHECK(gone == 1);
  ::close(sv[0]);
}
