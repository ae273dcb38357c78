// Stream over socketpairs and pipes: reading, writing, EOF and errors reported once and never
// from inside write(), and owners that vanish mid-callback.
#include "net/stream.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/fd.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;
using test::stream_pair;

TEST_CASE("socketpair streams carry bytes both ways and report EOF once") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  std::string got_a, got_b;
  std::vector<std::string> closes_b;
  ErrorKind kind = ErrorKind::other;
  a->start([&](std::string_view s) { got_a.append(s); }, [](const Error&) {});
  b->start([&](std::string_view s) { got_b.append(s); },
           [&](const Error& why) {
             closes_b.push_back(why.message);
             kind = why.kind;
           });
  a->write("hello ");
  a->write("world");
  b->write("back");
  CHECK(a->write_queue_bytes() == 0);  // small writes to an idle socket go straight out
  REQUIRE(run_until(loop, [&] { return got_b == "hello world" && got_a == "back"; }));
  CHECK(a->write_queue_bytes() == 0);

  a.reset();  // b's peer goes away
  REQUIRE(run_until(loop, [&] { return !closes_b.empty(); }));
  CHECK(b->ended());
  b->write("into the void");  // dropped: the stream has ended
  loop.run();                 // nothing more may arrive
  CHECK(closes_b == std::vector<std::string>{"eof"});
  CHECK(kind == ErrorKind::eof);  // what callers decide on, not the text
}

TEST_CASE("a write to a vanished peer is reported once through on_close") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  int closes = 0;
  std::string reason;
  a->start([](std::string_view) {},
           [&](const Error& why) {
             ++closes;
             reason = why.message;
           });
  b.reset();
  // Enough bytes that the kernel must refuse some: the write fails with EPIPE or the read EOF.
  for (int i = 0; i < 8; ++i) a->write(std::string(256 * 1024, 'x'));
  REQUIRE(run_until(loop, [&] { return closes > 0; }));
  loop.run();
  CHECK(closes == 1);
  CHECK((reason == "eof" || reason.rfind("write: ", 0) == 0 || reason.rfind("read: ", 0) == 0));
}

TEST_CASE("a write that libuv refuses at once is reported later, not inside write()") {
  Loop loop;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  UniqueFd write_end(fds[1]);
  auto reader = Stream::open_fd(loop, UniqueFd(fds[0]));  // a read-only pipe end
  REQUIRE(reader.ok());
  std::vector<std::string> closes;
  (*reader)->start([](std::string_view) {},
                   [&](const Error& why) { closes.push_back(why.message); });
  (*reader)->write("cannot go out");
  CHECK(closes.empty());  // not re-entrant
  REQUIRE(run_until(loop, [&] { return !closes.empty(); }));
  REQUIRE(closes.size() == 1);
  CHECK(closes[0].rfind("write: ", 0) == 0);
}

TEST_CASE("destroying the owner inside the read callback stops all callbacks") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  std::string seen_after_destroy;
  int reads = 0, closes = 0;
  b->start(
      [&](std::string_view bytes) {
        ++reads;
        b.reset();                                // the owner drops the stream mid-callback...
        seen_after_destroy = std::string(bytes);  // ...and the bytes are still valid
      },
      [&](const Error&) { ++closes; });
  a->write("first");
  REQUIRE(run_until(loop, [&] { return reads > 0; }));
  a->write("second");
  a.reset();
  loop.run();
  CHECK(reads == 1);
  CHECK(closes == 0);
  CHECK(seen_after_destroy == "first");
}

TEST_CASE("destroying the owner inside on_close is safe") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  int closes = 0;
  b->start([](std::string_view) {},
           [&](const Error&) {
             ++closes;
             b.reset();
           });
  a.reset();
  loop.run();
  CHECK(closes == 1);
  CHECK(!b);
}

TEST_CASE("close() drops pending work and suppresses every callback") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  int calls = 0;
  b->start([&](std::string_view) { ++calls; }, [&](const Error&) { ++calls; });
  b->write(std::string(1 << 20, 'y'));  // more than the socket buffer: stays queued
  b->close();
  b->close();  // idempotent
  CHECK(b->write_queue_bytes() == 0);
  a->write("ignored");
  a.reset();
  loop.run();
  CHECK(calls == 0);
}

TEST_CASE("end() delivers everything, then the peer sees EOF") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  std::string got;
  std::vector<std::string> closes_a, closes_b;
  const std::string big(300 * 1024, 'z');  // larger than the socket buffer
  b->start([&](std::string_view s) { got.append(s); },
           [&](const Error& why) { closes_b.push_back(why.message); });
  a->start([](std::string_view) {}, [&](const Error& why) { closes_a.push_back(why.message); });
  a->end(big);
  a->write("after end");  // dropped
  REQUIRE(run_until(loop, [&] { return !closes_b.empty(); }));
  CHECK(got == big);
  CHECK(closes_b == std::vector<std::string>{"eof"});
  CHECK(closes_a == std::vector<std::string>{"closed after writing"});
}

TEST_CASE("end() with nothing queued closes from the loop, not from inside end()") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  std::vector<std::string> closes_a, closes_b;
  a->start([](std::string_view) {}, [&](const Error& why) { closes_a.push_back(why.message); });
  b->start([](std::string_view) {}, [&](const Error& why) { closes_b.push_back(why.message); });
  a->end();
  CHECK(closes_a.empty());
  REQUIRE(run_until(loop, [&] { return !closes_b.empty(); }));
  CHECK(closes_a == std::vector<std::string>{"closed after writing"});
  CHECK(closes_b == std::vector<std::string>{"eof"});
}

TEST_CASE("an exception from a read callback stays at the edge") {
  Loop loop;
  auto pair = stream_pair(loop);
  auto& a = pair.a;
  auto& b = pair.b;
  int reads = 0;
  b->start(
      [&](std::string_view) {
        ++reads;
        throw std::runtime_error("handler bug");
      },
      [](const Error&) {});
  a->write("x");
  REQUIRE(run_until(loop, [&] { return reads == 1; }));
  a->write("y");
  REQUIRE(run_until(loop, [&] { return reads == 2; }));  // the stream still works
}

TEST_CASE("paused reading holds the peer back; when_drained fires once the queue empties") {
  Loop loop;
  auto pair = stream_pair(loop);
  size_t got = 0;
  pair.b->start([&](std::string_view s) { got += s.size(); }, [](const Error&) {});
  pair.a->start([](std::string_view) {}, [](const Error&) {});
  pair.b->pause_reading();
  // Far more than the kernel buffers hold: the rest waits in a's queue while b is paused.
  const std::string big(size_t{8} << 20, 'x');
  pair.a->write(big);
  REQUIRE(pair.a->write_queue_bytes() > 0);
  int drained = 0;
  pair.a->when_drained([&] { ++drained; });
  CHECK_FALSE(run_until(
      loop, [] { return false; }, 200));  // 200 ms of the loop running
  CHECK(got == 0);
  CHECK(drained == 0);
  pair.b->resume_reading();
  REQUIRE(run_until(loop, [&] { return got == big.size(); }));
  CHECK(drained == 1);
  CHECK(pair.a->write_queue_bytes() == 0);
  // With nothing queued it runs from the loop, not from inside the call.
  pair.a->when_drained([&] { ++drained; });
  CHECK(drained == 1);
  REQUIRE(run_until(loop, [&] { return drained == 2; }));
}

TEST_CASE("Loop::defer runs in order on the next iteration and is dropped at destruction") {
  std::vector<int> order;
  {
    Loop loop;
    loop.defer([&] {
      order.push_back(1);
      loop.defer([&] { order.push_back(3); });
    });
    loop.defer([&] { order.push_back(2); });
    CHECK(order.empty());
    loop.run();
    CHECK(order == std::vector<int>{1, 2, 3});
    loop.defer([&] { order.push_back(4); });
  }
  CHECK(order.size() == 3);
}

}  // namespace
}  // namespace lattice::net
