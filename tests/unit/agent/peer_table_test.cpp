#include "agent/peer_table.hpp"

#include <doctest/doctest.h>

#include "base/strings.hpp"

using namespace lattice;
using namespace lattice::agent;

namespace {
std::vector<Peer> numbered(int count) {
  std::vector<Peer> peers;
  for (int i = 0; i < count; ++i) peers.push_back(Peer{cat('n', i + 1), cat("h", i), 7400 + i});
  return peers;
}
}  // namespace

TEST_CASE("a peer table finds each node's index, and -1 for a stranger, at any size") {
  PeerTable none;
  CHECK(none.find("n1") == -1);
  // Listed one by one (4,096 ranges: hashed) and as host lists (one range: walked).
  PeerTable listed(numbered(4096));
  auto compact = PeerTable::compact("n[1-4096]", "h[0-4095]", {7400}, 4096).value();
  for (const PeerTable* table : {&listed, &compact}) {
    REQUIRE(table->size() == 4096);
    for (int i : {0, 1, 2047, 4095}) CHECK(table->find(cat('n', i + 1)) == i);
    CHECK(table->find("n4097") == -1);
    CHECK(table->find("n0") == -1);
    CHECK(table->find("") == -1);
    CHECK((*table)[4000].node_id == "n4001");
    CHECK((*table)[4000].host == "h4000");
  }
  CHECK(listed[4000].port == 11400);    // one per node
  CHECK(compact[4000].port == 7400);    // one for all
  PeerTable moved = std::move(listed);  // as a launch takes it: answers alike
  CHECK(moved.find("n17") == 16);
  PeerTable copied = moved;  // as an ended launch's nodes are kept
  CHECK(copied.find("n4096") == 4095);
}

TEST_CASE("a peer table joins its node ids and names one listed twice") {
  auto table = PeerTable::compact("n[1-3],login", "h[1-4]", {1, 2, 3, 4}, 16).value();
  CHECK(table.joined() == "n1,n2,n3,login");
  CHECK(table[3].port == 4);
  CHECK(!table.duplicate());
  CHECK(PeerTable::compact("n[1-3],n2", "h[1-4]", {1}, 16).value().duplicate() == "n2");
  CHECK(PeerTable({Peer{"a", "h", 1}, Peer{"a", "h", 2}}).duplicate() == "a");
}

TEST_CASE("a compact peer table is bounded and consistent, or refused") {
  CHECK(PeerTable::compact("n[1-5]", "h[1-5]", {1}, 4).error().message.find("peerList.nodeIds") ==
        0);
  CHECK(PeerTable::compact("n[1-2]", "h[", {1}, 4).error().message.find("peerList.hosts") == 0);
  CHECK(!PeerTable::compact("n[1-2]", "h[1-3]", {1}, 4));
  CHECK(!PeerTable::compact("n[1-2]", "h[1-2]", {1, 2, 3}, 4));
  CHECK(!PeerTable::compact("n[1-2]", "h[1-2]", {}, 4));
}
