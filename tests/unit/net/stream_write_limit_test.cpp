// Stream::set_write_limit: a peer that never reads ends the stream with the limit's reason,
// from the loop and once; a peer that keeps up with the same volume is never cut off. The limit
// counts what waits in the stream's own queue (the kernel's socket buffer takes the first
// bytes, how many depends on the kernel).
#include <doctest/doctest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "net/fd.hpp"
#include "net/stream.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;

constexpr size_t kLimit = 1 << 20;   // 1 MiB
constexpr size_t kPiece = 64 << 10;  // 64 KiB
constexpr size_t kTotal = 4 << 20;   // 4 MiB
std::string limit_reason(size_t queued) {
  return "write: the peer is not reading (" + std::to_string(queued) +
         " bytes queued, limit 1048576)";
}

TEST_CASE("a peer that never reads: the stream ends at the limit, from the loop, bytes dropped") {
  Loop loop;
  auto fds = make_socketpair();
  REQUIRE(fds.ok());
  UniqueFd silent = std::move(fds->second);  // never read until the end of the test
  auto made = Stream::open_fd(loop, std::move(fds->first));
  REQUIRE(made.ok());
  Stream& writer = **made;
  writer.set_write_limit(kLimit);
  std::vector<std::string> closes;
  writer.start([](std::string_view) {}, [&](const Error& why) { closes.push_back(why.message); });

  size_t accepted = 0;
  for (size_t sent = 0; sent < kTotal; sent += kPiece) {
    writer.write(std::string(kPiece, 'q'));
    CHECK(closes.empty());  // never from inside write()
    if (writer.write_queue_bytes() > accepted) accepted = writer.write_queue_bytes();
  }
  // Up to the limit is allowed (the kernel took the first bytes); a piece past it is not.
  CHECK(accepted <= kLimit);
  CHECK(accepted + kPiece > kLimit);
  writer.end("bye");  // keeps the limit's reason, not "closed after writing"
  REQUIRE(run_until(loop, [&] { return !closes.empty(); }));
  loop.run();
  CHECK(closes == std::vector<std::string>{limit_reason(accepted)});
  CHECK(writer.ended());
  CHECK(writer.write_queue_bytes() == 0);  // the stuck queue was freed with the handle

  // The silent end gets what the kernel took and what was queued before the limit, then EOF.
  size_t received = 0;
  char buf[64 * 1024];
  for (ssize_t n; (n = ::read(silent.get(), buf, sizeof buf)) > 0;) received += size_t(n);
  CHECK(received < kTotal / 2);  // what came past the limit was dropped, not delivered late
}

TEST_CASE("a peer that drains every burst is never cut off by the same limit") {
  Loop loop;
  auto [a, b] = test::stream_pair(loop);
  Stream& writer = *a;
  writer.set_write_limit(kLimit);
  std::vector<std::string> closes;
  size_t received = 0;
  writer.start([](std::string_view) {}, [&](const Error& why) { closes.push_back(why.message); });
  b->start([&](std::string_view s) { received += s.size(); }, [](const Error&) {});

  for (size_t sent = 0; sent < kTotal;) {
    for (size_t burst = 0; burst < kLimit; burst += kPiece, sent += kPiece)
      writer.write(std::string(kPiece, 'r'));  // each burst fills the queue to the limit exactly
    REQUIRE(run_until(loop, [&] { return received == sent && writer.write_queue_bytes() == 0; }));
  }
  CHECK(received == kTotal);
  CHECK(closes.empty());
  CHECK(!writer.ended());
}

TEST_CASE("write limits: one write above the limit fails on an empty queue; 0 is unlimited") {
  Loop loop;
  auto fds = make_socketpair();
  REQUIRE(fds.ok());
  UniqueFd silent = std::move(fds->second);
  auto made = Stream::open_fd(loop, std::move(fds->first));
  REQUIRE(made.ok());
  Stream& writer = **made;
  std::vector<std::string> closes;
  writer.start([](std::string_view) {}, [&](const Error& why) { closes.push_back(why.message); });

  writer.set_write_limit(0);
  for (size_t sent = 0; sent < kTotal; sent += kPiece) writer.write(std::string(kPiece, 's'));
  CHECK(writer.write_queue_bytes() > kLimit);  // past any limit, and still open
  CHECK(!run_until(
      loop, [&] { return !closes.empty(); }, 100));  // nothing ends it

  auto fds2 = make_socketpair();
  REQUIRE(fds2.ok());
  UniqueFd silent2 = std::move(fds2->second);
  auto small = Stream::open_fd(loop, std::move(fds2->first));
  REQUIRE(small.ok());
  std::vector<std::string> small_closes;
  (*small)->set_write_limit(100);
  (*small)->start([](std::string_view) {},
                  [&](const Error& why) { small_closes.push_back(why.message); });
  (*small)->write(std::string(101, 't'));
  (*small)->write("dropped too");
  REQUIRE(run_until(loop, [&] { return !small_closes.empty(); }));
  CHECK(small_closes ==
        std::vector<std::string>{"write: the peer is not reading (0 bytes queued, limit 100)"});
  writer.close();
}

}  // namespace
}  // namespace lattice::net
