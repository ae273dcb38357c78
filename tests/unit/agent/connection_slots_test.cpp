// ConnectionSlots without sockets: handshakes capped per source, authenticated links never
// dropped, a full table making room by dropping the biggest source's oldest handshake; and
// source_of's choice of what a source is.
#include "agent/connection_slots.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::agent;
using Verdict = ConnectionSlots::Verdict;

namespace {

const Source kFlood{"127.0.0.9", true};
const Source kLauncher{"192.0.2.1", true};

}  // namespace

TEST_CASE("one source holds at most max_handshakes_per_source handshakes") {
  ConnectionSlots slots(1024, 4);
  uint64_t id = 1;
  for (int i = 0; i < 4; ++i) CHECK(slots.admit(id++, kFlood).verdict == Verdict::admitted);
  CHECK(slots.admit(id++, kFlood).verdict == Verdict::source_full);
  CHECK(slots.handshakes_from(kFlood.name) == 4);
  // Another source is not affected: a launch during a one-source flood gets its slot.
  CHECK(slots.admit(id++, kLauncher).verdict == Verdict::admitted);
  // A completed handshake no longer counts against its source; a closed one neither.
  slots.authenticated(1);
  CHECK(slots.admit(id++, kFlood).verdict == Verdict::admitted);
  CHECK(slots.admit(id++, kFlood).verdict == Verdict::source_full);
  slots.closed(2);
  CHECK(slots.admit(id++, kFlood).verdict == Verdict::admitted);
  CHECK(slots.open() == 6);
  CHECK(slots.handshakes() == 5);
}

TEST_CASE("trusted local users are not capped per source") {
  ConnectionSlots slots(1024, 2);
  Source root{"local uid 0", false};
  for (uint64_t id = 1; id <= 10; ++id) CHECK(slots.admit(id, root).verdict == Verdict::admitted);
  CHECK(slots.handshakes_from(root.name) == 10);
}

TEST_CASE("a full table drops the oldest handshake of the source that holds the most") {
  ConnectionSlots slots(6, 3);
  CHECK(slots.admit(1, kLauncher).verdict == Verdict::admitted);
  slots.authenticated(1);
  CHECK(slots.admit(2, Source{"198.51.100.1", true}).verdict == Verdict::admitted);
  for (uint64_t id = 3; id <= 5; ++id) CHECK(slots.admit(id, kFlood).verdict == Verdict::admitted);
  CHECK(slots.admit(6, Source{"198.51.100.2", true}).verdict == Verdict::admitted);
  // Full: 1 authenticated, 2 and 6 alone from their sources, 3-5 from the flood.
  auto made_room = slots.admit(7, Source{"198.51.100.3", true});
  CHECK(made_room.verdict == Verdict::admitted);
  CHECK(made_room.dropped == 3);
  CHECK(slots.admit(8, Source{"198.51.100.4", true}).dropped == 4);
  // Every source holds one now: the oldest handshake goes.
  CHECK(slots.admit(9, Source{"198.51.100.5", true}).dropped == 2);
  CHECK(slots.admit(10, Source{"198.51.100.6", true}).dropped == 5);
  CHECK(slots.open() == 6);
  CHECK(slots.handshakes_from(kFlood.name) == 0);
  // A dropped handshake is forgotten: its later close changes nothing.
  slots.closed(3);
  CHECK(slots.open() == 6);
}

TEST_CASE("authenticated links are never dropped; with only those, a newcomer is refused") {
  ConnectionSlots slots(3, 3);
  for (uint64_t id = 1; id <= 3; ++id) {
    CHECK(slots.admit(id, kLauncher).verdict == Verdict::admitted);
    slots.authenticated(id);
  }
  auto refused = slots.admit(4, kFlood);
  CHECK(refused.verdict == Verdict::table_full);
  CHECK(refused.dropped == 0);
  slots.closed(2);
  CHECK(slots.admit(5, kFlood).verdict == Verdict::admitted);
  CHECK(slots.admit(6, kLauncher).dropped == 5);  // the only handshake makes room
  CHECK(slots.handshakes() == 1);
}

TEST_CASE("new limits apply to the connections that come next") {
  ConnectionSlots slots(4, 3);
  for (uint64_t id = 1; id <= 3; ++id) CHECK(slots.admit(id, kFlood).verdict == Verdict::admitted);
  slots.set_limits(2, 1);  // lower than what is held: nothing is dropped for it
  CHECK(slots.open() == 3);
  CHECK(slots.admit(4, kFlood).verdict == Verdict::source_full);
  CHECK(slots.admit(5, kLauncher).dropped == 1);  // still full: the flood's oldest gives way
  slots.set_limits(8, 4);
  CHECK(slots.admit(6, kFlood).verdict == Verdict::admitted);
  CHECK(slots.open() == 4);
}

TEST_CASE("source_of: remote clients by address, local ones by user") {
  net::PeerOrigin remote{"2001:db8::7", std::nullopt};
  Source s = source_of(remote, 0);
  CHECK(s.name == "2001:db8::7");
  CHECK(s.capped);
  // Two loopback addresses of one local user are one source.
  Source a = source_of(net::PeerOrigin{"127.0.0.9", 1001u}, 0);
  Source b = source_of(net::PeerOrigin{"127.0.0.10", 1001u}, 0);
  CHECK(a.name == "local uid 1001");
  CHECK(a.name == b.name);
  CHECK(a.capped);
  // Root and the agent's own user may read the key anyway: not capped.
  CHECK_FALSE(source_of(net::PeerOrigin{"127.0.0.1", 0u}, 1000).capped);
  CHECK_FALSE(source_of(net::PeerOrigin{"127.0.0.2", 1000u}, 1000).capped);
  CHECK(source_of(net::PeerOrigin{"127.0.0.2", 1001u}, 1000).capped);
}
