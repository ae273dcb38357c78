// Stream: writes made while a callback of the loop runs (a read, a timer) are held until it
// returns, then sent together in their order; end(), close(), destruction and the write limit
// all see the held bytes.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "net/fd.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;

// A Stream whose peer is a plain socket the test reads itself.
struct Watched {
  std::unique_ptr<Stream> stream;
  UniqueFd peer;
};

Watched watched(Loop& loop) {
  auto fds = make_socketpair();
  REQUIRE(fds.ok());
  auto made = Stream::open_fd(loop, std::move(fds->first));
  REQUIRE(made.ok());
  return Watched{std::move(made.value()), std::move(fds->second)};
}

// What the peer can read now, without waiting; "" when nothing has arrived.
std::string available(const UniqueFd& fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  return out;
}

// A stream pair whose reading end runs `on_read` for each read; the writer sends `trigger`.
struct Trigger {
  std::unique_ptr<Stream> writer, reader;
};

Trigger trigger(Loop& loop, std::function<void()> on_read) {
  auto [writer, reader] = test::stream_pair(loop);
  reader->start([on_read = std::move(on_read)](std::string_view) { on_read(); },
                [](const Error&) {});
  writer->write("go");
  return Trigger{std::move(writer), std::move(reader)};
}

TEST_CASE("writes inside a read callback go out when it returns, in order, to every stream") {
  Loop loop;
  Watched one = watched(loop), two = watched(loop);
  one.stream->start([](std::string_view) {}, [](const Error&) {});
  two.stream->start([](std::string_view) {}, [](const Error&) {});
  bool called = false;
  std::string seen_inside = "?";
  size_t queued_inside = 0;
  Trigger t = trigger(loop, [&] {
    one.stream->write("chunk 1,");
    two.stream->write("to two");
    one.stream->write("chunk 2,");
    one.stream->write("chunk 3");
    seen_inside = available(one.peer) + available(two.peer);
    queued_inside = one.stream->write_queue_bytes();
    called = true;
  });
  REQUIRE(run_until(loop, [&] { return called; }));
  CHECK(seen_inside.empty());         // held while the callback ran
  CHECK(queued_inside == 8 + 8 + 7);  // and counted as queued
  CHECK(available(one.peer) == "chunk 1,chunk 2,chunk 3");
  CHECK(available(two.peer) == "to two");
  CHECK(one.stream->write_queue_bytes() == 0);

  one.stream->write("outside");  // no callback running: straight out
  CHECK(available(one.peer) == "outside");
}

TEST_CASE("writes inside a timer callback are held too") {
  Loop loop;
  Watched w = watched(loop);
  w.stream->start([](std::string_view) {}, [](const Error&) {});
  Timer timer(loop);
  std::string seen_inside = "?";
  bool fired = false;
  timer.start(0, 0, [&] {
    w.stream->write("exit status,");
    w.stream->write("launch ended");
    seen_inside = available(w.peer);
    fired = true;
  });
  REQUIRE(run_until(loop, [&] { return fired; }));
  CHECK(seen_inside.empty());
  CHECK(available(w.peer) == "exit status,launch ended");
}

TEST_CASE("end() inside a read callback sends what was held before the end") {
  Loop loop;
  Watched w = watched(loop);
  std::vector<std::string> closes;
  w.stream->start([](std::string_view) {},
                  [&](const Error& why) { closes.push_back(why.message); });
  Trigger t = trigger(loop, [&] {
    w.stream->write("first,");
    w.stream->end("last");
    w.stream->write("after the end");  // dropped
  });
  REQUIRE(run_until(loop, [&] { return !closes.empty(); }));
  CHECK(closes == std::vector<std::string>{"closed after writing"});
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::recv(w.peer.get(), buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  CHECK(got == "first,last");  // then EOF
}

TEST_CASE("a stream closed or destroyed inside the callback sends what it held, as write() did") {
  // Before writes were held, a write then close() in one callback sent what the socket took at
  // once (a connection's final record, say): held bytes keep that.
  Loop loop;
  Watched gone = watched(loop), closed = watched(loop), kept = watched(loop);
  for (auto* w : {&gone, &closed, &kept})
    w->stream->start([](std::string_view) {}, [](const Error&) {});
  bool called = false;
  Trigger t = trigger(loop, [&] {
    gone.stream->write("last words");
    closed.stream->write("final record");
    kept.stream->write("still held");
    gone.stream.reset();
    closed.stream->close();
    closed.stream->write("after close");  // dropped
    CHECK(available(kept.peer).empty());
    called = true;
  });
  REQUIRE(run_until(loop, [&] { return called; }));
  CHECK(available(kept.peer) == "still held");
  CHECK(available(closed.peer) == "final record");
  CHECK(available(gone.peer) == "last words");
}

TEST_CASE("the write limit counts held bytes") {
  Loop loop;
  Watched w = watched(loop);
  std::vector<std::string> closes;
  w.stream->set_write_limit(10);
  w.stream->start([](std::string_view) {},
                  [&](const Error& why) { closes.push_back(why.message); });
  Trigger t = trigger(loop, [&] {
    w.stream->write("12345678");
    w.stream->write("12345678");  // 16 bytes waiting: over the limit
  });
  REQUIRE(run_until(loop, [&] { return !closes.empty(); }));
  CHECK(closes ==
        std::vector<std::string>{"write: the peer is not reading (8 bytes queued, limit 10)"});
  CHECK(available(w.peer).empty());  // the stream ended before the held bytes went out
}

}  // namespace
}  // namespace lattice::net
