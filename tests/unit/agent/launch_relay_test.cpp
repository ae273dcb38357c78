// A relayed launch's routing at one agent (launch_relay.hpp), over seven nodes n0..n6 with head
// n0 and fanout 2: n0 -> n1, n2; n1 -> n3, n4; n2 -> n5, n6. Rank r runs on node r / 2.
#include "agent/launch_relay.hpp"

#include <doctest/doctest.h>

#include "tree_spec.hpp"

using namespace lattice;
using namespace lattice::agent;

namespace {

LaunchSpec seven(int self, int input_rank = 0) {
  LaunchSpec spec = tree_spec(7, self);
  spec.relayed = true;
  spec.world_size = 14;
  for (int r = 0; r < 14; ++r) spec.rank_nodes.push_back(r / 2);
  spec.input_rank = input_rank;
  return spec;
}

}  // namespace

TEST_CASE("reports pass up from a child about its own subtree only") {
  LaunchRelay at_n1(seven(1));
  CHECK(at_n1.children() == std::vector<int>{3, 4});
  CHECK(at_n1.uplink() == LaunchRelay::kOrigin);
  CHECK(at_n1.may_pass(3, 3));
  CHECK(at_n1.may_pass(4, 4));
  CHECK_FALSE(at_n1.may_pass(3, 4));  // a child speaking for its sibling
  CHECK_FALSE(at_n1.may_pass(5, 5));  // not a child
  CHECK_FALSE(at_n1.may_pass(0, 1));  // the parent
  CHECK_FALSE(at_n1.may_pass(3, 9));  // no such node
  LaunchRelay at_n0(seven(0));
  CHECK(at_n0.may_pass(1, 4));  // n4 is below n1
  CHECK_FALSE(at_n0.may_pass(1, 5));
  // At the head, a node whose way up was lost speaks for itself, and for nobody else.
  CHECK(at_n0.may_pass(5, 5));
  CHECK_FALSE(at_n0.may_pass(5, 6));
}

TEST_CASE("settled once every node below has ended or was refused") {
  LaunchRelay at_n1(seven(1));
  CHECK_FALSE(at_n1.settled());
  at_n1.accepted(3);
  at_n1.ended(3);
  CHECK_FALSE(at_n1.settled());
  at_n1.ended(4);
  CHECK(at_n1.settled());
  LaunchRelay at_n0(seven(0));
  at_n0.refused(1);  // n1 asked nobody: n3 and n4 are settled with it
  for (int n : {2, 5, 6}) at_n0.ended(n);
  CHECK(at_n0.settled());
  LaunchRelay leaf(seven(6));
  CHECK(leaf.settled());
  CHECK(leaf.children().empty());
}

TEST_CASE("a lost child: reported once; its subtree settled unless the head awaits it") {
  LaunchRelay at_n1(seven(1));
  at_n1.accepted(3);
  CHECK(at_n1.lost(3));
  CHECK_FALSE(at_n1.lost(3));  // already reported
  at_n1.ended(4);
  CHECK(at_n1.settled());
  // At the head: n1 had accepted, so n3 and n4 (below it) report to the head directly.
  LaunchRelay at_n0(seven(0));
  at_n0.accepted(1);
  CHECK(at_n0.lost(1));
  for (int n : {2, 5, 6}) at_n0.ended(n);
  CHECK_FALSE(at_n0.settled());
  at_n0.ended(3);
  at_n0.ended(4);
  CHECK(at_n0.settled());
  // n2 lost before it answered: nobody below it was asked.
  LaunchRelay early(seven(0));
  CHECK(early.lost(2));
  for (int n : {1, 3, 4}) early.ended(n);
  CHECK(early.settled());
  // A loss reported from below (n3, by n1) also settles it here.
  LaunchRelay from_below(seven(0));
  from_below.accepted(3);
  CHECK(from_below.lost(3));
  CHECK_FALSE(from_below.lost(0));  // itself: not a node below
}

TEST_CASE("the parent lost: reported to the head, once; the head lost: nowhere until adopted") {
  LaunchRelay at_n3(seven(3));
  CHECK(at_n3.reports_via_parent());
  CHECK_FALSE(LaunchRelay(seven(0)).reports_via_parent());  // the head's go to the launcher
  CHECK(at_n3.lost(1));  // its own parent may be lost too: then only n3 can say so
  CHECK_FALSE(at_n3.reports_via_parent());
  CHECK(at_n3.uplink() == 0);
  CHECK_FALSE(at_n3.lost(1));  // both of its links to n1 closing report it once
  LaunchRelay at_n1(seven(1));
  at_n1.lost(0);
  CHECK(at_n1.uplink() == LaunchRelay::kNowhere);
  at_n1.adopted();
  CHECK(at_n1.uplink() == LaunchRelay::kOrigin);
  CHECK_FALSE(at_n1.reports_via_parent());  // the link is the launcher's now
  CHECK_FALSE(at_n1.lost(0));  // adopted: the loss is not reported again, nor the uplink moved
  CHECK(at_n1.uplink() == LaunchRelay::kOrigin);
}

TEST_CASE("at the head, the children of a lost relay stand in for it, and only for it") {
  // Fanout 2 over 15 nodes: n1 -> n3, n4; n3 -> n7, n8; n4 -> n9, n10.
  LaunchSpec spec = seven(0);
  spec.peers = tree_spec(15, 0).peers;
  spec.world_size = 15;
  spec.rank_nodes.assign(15, 0);
  for (int r = 0; r < 15; ++r) spec.rank_nodes[size_t(r)] = r;
  LaunchRelay head(spec);
  CHECK_FALSE(head.may_pass(3, 7));  // n1 is fine: n3 is not the head's to hear
  CHECK(head.may_pass(3, 3));        // about itself, always (its way up may be lost)
  CHECK(head.may_pass(3, 1, true));  // its parent lost: that, n3 may say
  CHECK_FALSE(head.may_pass(3, 1));  // but not that n1 ended, or any other report of n1's
  head.accepted(1);
  CHECK(head.lost(1));         // reported lost (by the head's own link, or by n3)
  CHECK(head.may_pass(3, 7));  // now n3 relays for its subtree straight to the head
  CHECK(head.may_pass(3, 8));
  CHECK_FALSE(head.may_pass(3, 9));  // n4's subtree: not n3's to speak for
  CHECK_FALSE(head.may_pass(3, 4));  // nor its sibling
  CHECK_FALSE(head.may_pass(7, 3));  // n7's parent, n3, is not lost
  CHECK_FALSE(head.may_pass(7, 8));
  // n3 lost too (reported by n7, its child, as n1 that watched it is gone): n7 takes over.
  CHECK(head.may_pass(7, 3, true));
  head.accepted(3);
  CHECK(head.lost(3));
  CHECK(head.may_pass(7, 7));
  CHECK_FALSE(head.may_pass(7, 8));  // n7's sibling: not in its subtree
  // The lost nodes' subtrees stay open: their ends still come, from the nodes themselves.
  for (int n : {2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14}) head.ended(n);
  CHECK_FALSE(head.settled());
  head.ended(7);
  CHECK(head.settled());
}

TEST_CASE("stdin goes down only toward the input ranks") {
  CHECK(LaunchRelay(seven(0, 12)).input_children() == std::vector<int>{2});  // rank 12: n6
  CHECK(LaunchRelay(seven(1, 12)).input_children().empty());
  CHECK(LaunchRelay(seven(2, 12)).input_children() == std::vector<int>{6});
  CHECK(LaunchRelay(seven(0, -1)).input_children() == std::vector<int>{1, 2});
  CHECK(LaunchRelay(seven(0, -2)).input_children().empty());
}
