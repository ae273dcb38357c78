// What agents send for a launch not started here waits within a budget and an age: a peer that
// floods aborts or fence chunks for launch ids that never come gains nothing past the budget,
// and everything is handed over, in order, when the launch arrives.
#include "agent/early_messages.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace lattice;
using namespace lattice::agent;

namespace {

Sender peer(const char* name) { return Sender{7, secure::Identity{secure::Role::agent, name}}; }

EarlyMessage abort_from(const char* name, std::string detail) {
  Failure f;
  f.detail = std::move(detail);
  return EarlyMessage{std::nullopt, f, peer(name)};
}

EarlyMessage chunk_from(const char* name, size_t value_bytes) {
  wire::FenceMessage m;
  m.launch_id = "L";
  m.chunk.entries = std::make_shared<const std::string>(value_bytes + 3, 'v');  // one entry's
  return EarlyMessage{m, std::nullopt, peer(name)};
}

}  // namespace

TEST_CASE("a flood of messages for launches that never come stops at the byte budget") {
  EarlyMessages early(64 * 1024, 30000);
  int kept = 0;
  for (int i = 0; i < 10000; ++i)
    if (early.hold("launch-" + std::to_string(i), abort_from("n9", std::string(1000, 'x')), 0))
      ++kept;
  CHECK(kept > 0);
  CHECK(kept < 64);  // 1000+ bytes each against 64 KiB
  CHECK(early.bytes() <= 64 * 1024);
  // One message larger than the whole budget is refused outright.
  EarlyMessages small(4096, 30000);
  CHECK(!small.hold("L", chunk_from("n2", 1 << 20), 0));
  CHECK(small.bytes() == 0);
}

TEST_CASE("held messages go to their launch in arrival order, and the budget comes back") {
  EarlyMessages early(1 << 20, 30000);
  REQUIRE(early.hold("L", chunk_from("n2", 10), 5));
  REQUIRE(early.hold("other", abort_from("n3", "elsewhere"), 6));
  REQUIRE(early.hold("L", abort_from("n1", "head says stop"), 7));
  auto got = early.take("L");
  REQUIRE(got.size() == 2);
  CHECK(got[0].fence);
  CHECK(got[0].sender.identity.name == "n2");  // judged later against the link it came on
  CHECK(got[1].abort->detail == "head says stop");
  CHECK(early.take("L").empty());
  CHECK(early.take("other").size() == 1);
  CHECK(early.bytes() == 0);
}

TEST_CASE("what waits longer than the age is dropped, per launch") {
  EarlyMessages early(1 << 20, 1000);
  REQUIRE(early.hold("old", abort_from("n1", "a"), 0));
  REQUIRE(early.hold("old", abort_from("n1", "b"), 10));
  REQUIRE(early.hold("new", abort_from("n1", "c"), 900));
  CHECK(early.expire(999).empty());
  auto dropped = early.expire(1000);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] == std::pair<std::string, size_t>{"old", 2});
  CHECK(early.take("old").empty());
  CHECK(early.take("new").size() == 1);
  CHECK(early.bytes() == 0);
}
