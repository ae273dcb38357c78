// How a launch reaches its nodes: a star links to each; a relayed launch reaches every node
// through the head until it is lost, then each directly.
#include "launcher/fan_out.hpp"

#include <doctest/doctest.h>

#include <csignal>

using namespace lattice::launcher;
using lattice::ErrorKind;
using lattice::policy::Failure;

namespace {

// 7 nodes, head 0, fanout 2: 1 holds 3 and 4 below it, 2 holds 5 and 6.
FanOut relayed() { return FanOut(7, 0, 2, true, "tree"); }

}  // namespace

TEST_CASE("relayed with --launch tree, or auto from 16 nodes, and only with every id known") {
  CHECK(FanOut(2, 0, 2, true, "tree").relayed());
  CHECK(!FanOut(15, 0, 2, true, "auto").relayed());
  CHECK(FanOut(16, 0, 2, true, "auto").relayed());
  CHECK(!FanOut(16, 0, 2, true, "star").relayed());
  CHECK(!FanOut(16, 0, 2, false, "tree").relayed());  // the launcher proves only the head's id
  CHECK(!FanOut(1, 0, 2, true, "tree").relayed());
  CHECK(FanOut(1, 0, 2, true, "tree").tree() == nullptr);
  REQUIRE(FanOut(3, 1, 2, true, "star").tree());
  CHECK(FanOut(3, 1, 2, true, "star").tree()->root() == 1);
}

TEST_CASE("a star: each node's own link carries what is its, and only that") {
  FanOut star(4, 1, 2, true, "star");
  for (int n = 0; n < 4; ++n) {
    CHECK(star.linked_first(n));
    CHECK(star.link_of(n) == n);
    CHECK(!star.carries_all(n));
    CHECK(star.below(n).empty());
  }
  CHECK(star.origin(2, 2) == 2);
  CHECK(!star.origin(2, 3));
  CHECK(!star.origin(2, 4));        // no such node
  CHECK(!star.answered_for(2, 2));  // a star's agents answer their own requests
  CHECK(!star.started_nothing(ErrorKind::other));
  CHECK(star.started_nothing(ErrorKind::refused));
  CHECK(star.abort() == FanOut::Abort::own_link);
  CHECK(star.abort() == FanOut::Abort::own_link);
  CHECK(star.signal_goes_out(SIGINT));
  CHECK(star.signal_goes_out(SIGINT));
}

TEST_CASE("relayed: the head's link carries everything, and a link speaks for its subtree") {
  FanOut fan = relayed();
  CHECK(fan.linked_first(0));
  CHECK(!fan.linked_first(1));
  for (int n = 0; n < 7; ++n) CHECK(fan.link_of(n) == 0);
  CHECK(fan.carries_all(0));
  CHECK(!fan.carries_all(1));
  for (uint32_t n = 0; n < 7; ++n) CHECK(fan.origin(0, n) == static_cast<int>(n));
  CHECK(!fan.origin(0, 7));
  CHECK(fan.answered_for(1, 4) == 4);
  CHECK(!fan.answered_for(1, 5));  // not below node 1
  CHECK(fan.speaks_for(0, 6));
  CHECK(!fan.speaks_for(2, 1));
  CHECK(fan.started_nothing(ErrorKind::other));  // a relay's answer carries only its text
  CHECK(fan.below(1) == std::vector<int>{3, 4});
  CHECK(fan.below(0) == std::vector<int>{1, 2, 3, 4, 5, 6});
  CHECK(fan.below(6).empty());
}

TEST_CASE("relayed: the head passes an abort and each signal on, so each goes to it once") {
  FanOut fan = relayed();
  CHECK(fan.abort() == FanOut::Abort::to_head);
  CHECK(fan.abort() == FanOut::Abort::passed_on);
  CHECK(fan.signal_goes_out(SIGINT));
  CHECK(fan.signal_goes_out(SIGTERM));
  CHECK(!fan.signal_goes_out(SIGINT));
}

TEST_CASE("relayed, its head lost: every node is reached directly, and told the abort") {
  FanOut fan = relayed();
  CHECK(fan.direct_abort() == nullptr);
  CHECK(fan.signal_goes_out(SIGINT));
  fan.go_direct(Failure{"node n0 lost", 1});
  REQUIRE(fan.direct_abort());
  CHECK(fan.direct_abort()->detail == "node n0 lost");
  for (int n = 0; n < 7; ++n) CHECK(fan.link_of(n) == n);
  CHECK(!fan.carries_all(0));
  CHECK(fan.abort() == FanOut::Abort::own_link);
  CHECK(fan.abort() == FanOut::Abort::own_link);
  CHECK(fan.signal_goes_out(SIGINT));
  // Still relayed: what a node held while its way up was lost comes up its own link, about
  // its subtree.
  CHECK(fan.origin(1, 3) == 3);
  CHECK(fan.below(1) == std::vector<int>{3, 4});
}
