// Who may do what to a launch: every rule of authority.hpp, for a launch of four nodes n0..n3
// with head n0 and fanout 2 (n0 -> n1, n2; n1 -> n3), seen from n1.
#include "agent/authority.hpp"

#include <doctest/doctest.h>

#include "tree_spec.hpp"

using namespace lattice;
using namespace lattice::agent;
using secure::Identity;
using secure::Role;

namespace {

constexpr uint64_t kLauncherConn = 7;

LaunchSpec four_nodes(int self) { return tree_spec(4, self); }

Sender member(const std::string& name, uint64_t conn = 11) {
  return Sender{conn, Identity{Role::agent, name}};
}

bool refused(const Status& s, const std::string& needle) {
  return !s && s.error().message.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("only launchers start launches") {
  CHECK(may_start(Sender{1, Identity{Role::launcher, "lattice@h:1"}}, false));
  CHECK(refused(may_start(member("n0"), false), "only launchers start launches"));
}

TEST_CASE("a relayed launch: the head's from its launcher, the others' from their parent") {
  auto relayed = [](int self) {
    auto spec = four_nodes(self);
    spec.relayed = true;
    spec.launcher_name = "lattice@h:1";
    return spec;
  };
  fence::Tree tree(4, 0, 2);             // n0 -> n1, n2; n1 -> n3
  CHECK(may_start(member("n0"), true));  // judged once decoded
  CHECK(may_start_relayed(relayed(0), tree, Sender{1, Identity{Role::launcher, "lattice@h:1"}}));
  CHECK(refused(
      may_start_relayed(relayed(0), tree, Sender{1, Identity{Role::launcher, "lattice@h:2"}}),
      "it names its launcher 'lattice@h:1'"));
  CHECK(refused(may_start_relayed(relayed(0), tree, member("n1")),
                "only launchers and local users start"));
  CHECK(may_start_relayed(relayed(3), tree, member("n1")));
  // Not its parent, a stranger, or a launcher going round the tree.
  CHECK(refused(may_start_relayed(relayed(3), tree, member("n0")), "only node 1 (n1)"));
  CHECK(refused(may_start_relayed(relayed(3), tree, member("intruder")), "only node 1 (n1)"));
  CHECK(refused(
      may_start_relayed(relayed(3), tree, Sender{1, Identity{Role::launcher, "lattice@h:1"}}),
      "only node 1 (n1)"));
}

TEST_CASE("signals come only from the launch's own launcher link") {
  auto spec = four_nodes(1);
  CHECK(may_signal(spec, kLauncherConn, Sender{kLauncherConn, Identity{Role::launcher, "l"}}));
  // Another launcher (another link), or the head, may not.
  CHECK(refused(may_signal(spec, kLauncherConn, Sender{8, Identity{Role::launcher, "l"}}),
                "only the launch's own launcher"));
  CHECK_FALSE(may_signal(spec, kLauncherConn, member("n0")));
}

TEST_CASE("aborts: the launcher, the head, or (at the head) any member") {
  auto at_n1 = four_nodes(1);
  CHECK(may_abort(at_n1, kLauncherConn, Sender{kLauncherConn, Identity{Role::launcher, "l"}}));
  CHECK(may_abort(at_n1, kLauncherConn, member("n0")));  // the head
  CHECK(refused(may_abort(at_n1, kLauncherConn, member("n2")), "only its head"));
  CHECK(refused(may_abort(at_n1, kLauncherConn, member("intruder")), "not one of its nodes"));
  CHECK_FALSE(may_abort(at_n1, kLauncherConn, Sender{8, Identity{Role::launcher, "other"}}));
  auto at_head = four_nodes(0);
  CHECK(may_abort(at_head, kLauncherConn, member("n3")));  // members report failures to the head
  // An identity that names a member but is a launcher is no member.
  CHECK_FALSE(may_abort(at_head, kLauncherConn, Sender{9, Identity{Role::launcher, "n3"}}));
}

TEST_CASE("fence chunks: up from a child, down from the parent, fromNode = the link's node") {
  auto spec = four_nodes(1);
  fence::Tree tree(4, 0, 2);
  REQUIRE(tree.parent(1) == 0);
  REQUIRE(tree.parent(3) == 1);
  CHECK(may_send_fence(spec, tree, false, 3, member("n3")));  // child n3 up
  CHECK(may_send_fence(spec, tree, true, 0, member("n0")));   // parent n0 down (data or error)
  CHECK(refused(may_send_fence(spec, tree, false, 3, member("n2")),
                "claims to come from node 3 but the link is node 2"));
  CHECK(refused(may_send_fence(spec, tree, false, 2, member("n2")), "not this node's child"));
  CHECK(refused(may_send_fence(spec, tree, true, 3, member("n3")), "not this node's parent"));
  CHECK(refused(may_send_fence(spec, tree, true, 0, member("n3")), "claims to come from node 0"));
  CHECK(refused(may_send_fence(spec, tree, false, 3, member("intruder")), "not one of its nodes"));
  CHECK(refused(may_send_fence(spec, tree, false, 3, Sender{1, Identity{Role::launcher, "n3"}}),
                "not one of its nodes"));
}

TEST_CASE("direct modex: requests from any member, about a rank of the launch") {
  // The answer needs no rule: it comes back on the link the request went out on, to the node
  // that runs the rank.
  auto spec = four_nodes(1);
  spec.world_size = 4;
  spec.rank_nodes = {0, 1, 2, 3};
  auto from_n2 = may_ask_modex(spec, 3, member("n2"));
  REQUIRE(from_n2);
  CHECK(*from_n2 == 2);  // the link's node, whatever the message says
  CHECK_FALSE(may_ask_modex(spec, 1, member("intruder")));
  CHECK_FALSE(may_ask_modex(spec, 4, member("n2")));  // no such rank
  CHECK_FALSE(may_ask_modex(spec, -1, member("n2")));
  CHECK_FALSE(may_ask_modex(spec, 1, Sender{kLauncherConn, Identity{Role::launcher, "l"}}));
}

TEST_CASE("names: requests from any member, at the head only") {
  auto head = four_nodes(0);
  auto from = may_ask_name(head, member("n3"));
  REQUIRE(from);
  CHECK(*from == 3);
  CHECK_FALSE(may_ask_name(head, member("intruder")));
  auto at_n1 = four_nodes(1);
  auto refused = may_ask_name(at_n1, member("n2"));  // n1 holds no names
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("not its head") != std::string::npos);
}

TEST_CASE("escape-hatch messages: members of the launch only, named by their link") {
  auto spec = four_nodes(1);
  auto n3 = member_node(spec, member("n3"), "an escape-hatch command");
  REQUIRE(n3);
  CHECK(*n3 == 3);
  auto stranger = member_node(spec, member("intruder"), "an escape-hatch command");
  REQUIRE_FALSE(stranger);
  CHECK(stranger.error().message.find("not one of its nodes") != std::string::npos);
  CHECK_FALSE(member_node(spec, Sender{kLauncherConn, Identity{Role::launcher, "n3"}}, "x"));
}

namespace {

Sender user(uint32_t uid, uint64_t conn = 21) {
  return Sender{conn, Identity{Role::user, std::to_string(uid)}};
}

// Allocation A1 of alice (uid 1001) on n0..n3, as tree_spec's nodes are.
wire::AllocationSpec alice_allocation() {
  wire::AllocationSpec alloc;
  alloc.id = "A1";
  alloc.user = JobUser{1001, 1001, std::vector<uint32_t>{1001, 27}, "alice"};
  for (int i = 0; i < 4; ++i) alloc.nodes.push_back(wire::PeerInfo{cat('n', i), "h", 1});
  return alloc;
}

LaunchSpec in_allocation(int self, const std::string& id = "A1") {
  LaunchSpec spec = four_nodes(self);
  spec.allocation_id = id;
  spec.user = JobUser{1001, 1001, std::vector<uint32_t>{1001, 27}, "alice"};
  return spec;
}

}  // namespace

TEST_CASE("a local user's identity is its uid, and only the kernel gives one") {
  CHECK(user_uid(Identity{Role::user, "1001"}) == 1001u);
  CHECK_FALSE(user_uid(Identity{Role::launcher, "1001"}));
  CHECK_FALSE(user_uid(Identity{Role::user, "alice"}));
  CHECK(may_start(user(1001), false));  // judged with its allocation
}

TEST_CASE("launches in an allocation: held here, running, its user, its nodes") {
  const auto alloc = alice_allocation();
  const Sender launcher{1, Identity{Role::launcher, "lattice@h:1"}};
  // Its owner through the user door, at the head; root too; a key holder; a relaying parent.
  CHECK(may_launch_in(in_allocation(0), &alloc, false, user(1001)));
  CHECK(may_launch_in(in_allocation(0), &alloc, false, user(0)));
  CHECK(may_launch_in(in_allocation(2), &alloc, false, launcher));
  CHECK(may_launch_in(in_allocation(3), &alloc, false, member("n1")));
  // Another user, even naming alice as the job's user.
  const auto another = may_launch_in(in_allocation(0), &alloc, false, user(1002));
  const auto none = may_launch_in(in_allocation(0, "A1"), nullptr, false, user(1002));
  REQUIRE(!another);
  CHECK(another.error().message == none.error().message);  // nothing told of others'
  CHECK(refused(another, "is not held by this node (or is not this user's)"));
  // Not held here, ending, another job user, other groups, a node outside it.
  CHECK(refused(may_launch_in(in_allocation(0, "B7"), nullptr, false, user(1001)),
                "allocation 'B7' is not held by this node"));
  CHECK(refused(may_launch_in(in_allocation(0), &alloc, true, user(1001)), "is ending"));
  auto as_root = in_allocation(0);
  as_root.user = JobUser{0, 0, std::vector<uint32_t>{0}, "root"};
  CHECK(refused(may_launch_in(as_root, &alloc, false, launcher), "runs launches as alice"));
  auto more_groups = in_allocation(0);
  more_groups.user.groups = std::vector<uint32_t>{1001, 27, 6};  // disk
  CHECK(refused(may_launch_in(more_groups, &alloc, false, user(1001)), "and its groups only"));
  auto outside = in_allocation(0);
  outside.peers = PeerTable({Peer{"n0", "h", 1}, Peer{"n9", "h", 1}});
  CHECK(refused(may_launch_in(outside, &alloc, false, user(1001)), "node n9 is not one of"));
  auto moved = in_allocation(0);
  moved.peers = PeerTable({Peer{"n0", "h", 1}, Peer{"n1", "evil", 1}});
  CHECK(refused(may_launch_in(moved, &alloc, false, user(1001)), "node n1 is not one of"));
  // Through the door: always in an allocation, and at the door's own node, the head.
  CHECK(refused(may_launch_in(four_nodes(0), nullptr, false, user(1001)),
                "only inside an allocation"));
  CHECK(refused(may_launch_in(in_allocation(2), &alloc, false, user(1001)), "starts at its head"));
  // Key holders' launches outside allocations are as before.
  CHECK(may_launch_in(four_nodes(1), nullptr, false, launcher));
}

TEST_CASE("allocations: managed by launchers, described to their own users") {
  const auto alloc = alice_allocation();
  CHECK(may_manage_allocations(Sender{1, Identity{Role::launcher, "lattice@h:1"}}));
  CHECK(refused(may_manage_allocations(user(0)), "only launchers"));
  CHECK(refused(may_manage_allocations(member("n1")), "only launchers"));
  CHECK(may_describe(alloc, user(1001)));
  CHECK(may_describe(alloc, user(0)));
  CHECK(may_describe(alloc, Sender{1, Identity{Role::launcher, "x"}}));
  CHECK(refused(may_describe(alloc, user(1002)), "it is not theirs"));
  CHECK_FALSE(may_describe(alloc, member("n0")));
}

TEST_CASE("the whole status: key-holding launchers only, not peers or local users") {
  CHECK(may_see_status(Sender{1, Identity{Role::launcher, "lattice@h:1"}}));
  CHECK(refused(may_see_status(user(0)), "only launchers"));
  CHECK(refused(may_see_status(user(1001)), "only launchers"));
  CHECK(refused(may_see_status(member("n1")), "only launchers"));
}

TEST_CASE("a relayed launch through the user door: its head takes it from the user it names") {
  fence::Tree tree(4, 0, 2);
  auto spec = in_allocation(0);
  spec.relayed = true;
  spec.launcher_name = "1001";
  CHECK(may_start_relayed(spec, tree, user(1001)));
  CHECK(refused(may_start_relayed(spec, tree, user(1002)), "it names its launcher '1001'"));
}

namespace {

LaunchSpec spawned(int nodes, uint32_t uid, uint32_t rank) {
  LaunchSpec child = tree_spec(nodes, 1);
  child.launch_id = "C";
  child.user.uid = uid;
  child.spawned_by = wire::SpawnParent{"L", rank, ""};
  return child;
}

}  // namespace

TEST_CASE("a spawned launch shares its parent's node only from its parent's launcher and user") {
  LaunchSpec parent = four_nodes(1);
  parent.world_size = 4;
  parent.user.uid = 1000;
  const Identity launcher{Role::launcher, "lattice@host:1"};
  const Sender from_launcher{kLauncherConn, launcher};
  LaunchSpec child = spawned(2, 1000, 2);  // nodes n0, n1: the parent's
  CHECK(may_spawn_beside(child, parent, launcher, from_launcher));
  CHECK(refused(may_spawn_beside(child, parent, launcher,
                                 Sender{9, Identity{Role::launcher, "lattice@other:2"}}),
                "its parent came from launcher lattice@host:1"));
  CHECK(refused(may_spawn_beside(child, parent, launcher, member("n0")), "its parent came from"));
  CHECK(refused(may_spawn_beside(spawned(2, 1001, 2), parent, launcher, from_launcher),
                "another user than its parent"));
  CHECK(refused(may_spawn_beside(spawned(2, 1000, 4), parent, launcher, from_launcher),
                "no such rank"));
  // n4 is none of the parent's
  CHECK(refused(may_spawn_beside(spawned(5, 1000, 2), parent, launcher, from_launcher),
                "nodes its parent has not"));
}

TEST_CASE("a spawned launch's data: its members, and its family's first launch's, may ask") {
  LaunchSpec parent = four_nodes(1);
  parent.world_size = 4;
  parent.rank_nodes = {0, 1, 2, 3};
  LaunchSpec child = spawned(2, 1000, 0);  // nodes n0, n1
  child.world_size = 2;
  child.rank_nodes = {0, 1};
  CHECK(*may_ask_modex(child, 1, member("n0"), &parent) == 0);
  auto from_parent = may_ask_modex(child, 1, member("n3"), &parent);  // a parent-only node
  REQUIRE(from_parent);
  CHECK(*from_parent == -1);
  CHECK_FALSE(may_ask_modex(child, 1, member("n3")));  // its parent not here
  LaunchSpec other = four_nodes(1);
  other.launch_id = "another";
  CHECK_FALSE(may_ask_modex(child, 1, member("n3"), &other));  // not the launch that spawned it
  CHECK_FALSE(may_ask_modex(child, 1, member("intruder"), &parent));
  CHECK_FALSE(may_ask_modex(child, 2, member("n3"), &parent));  // no such rank
  // A grandchild: the family is the first launch's, not its own parent's.
  LaunchSpec grandchild = spawned(1, 1000, 0);
  grandchild.launch_id = "G";
  grandchild.world_size = 1;
  grandchild.rank_nodes = {0};
  grandchild.spawned_by = wire::SpawnParent{"C", 0, "L"};
  CHECK(*may_ask_modex(grandchild, 0, member("n3"), &parent) == -1);
  CHECK_FALSE(may_ask_modex(grandchild, 0, member("n3"), &child));  // C is not the family's first
}

TEST_CASE("a spawned launch's layout comes from the launch's head, or goes to it from a node") {
  LaunchSpec spec = four_nodes(1);  // head n0
  auto from_head = may_tell_family(spec, member("n0"));
  REQUIRE(from_head);
  CHECK(*from_head == 0);
  CHECK_FALSE(may_tell_family(spec, member("n2")));  // n1 is not the head: n2 cannot tell it
  CHECK_FALSE(may_tell_family(spec, member("intruder")));
  CHECK_FALSE(may_tell_family(spec, Sender{kLauncherConn, Identity{Role::launcher, "l"}}));
  LaunchSpec head = four_nodes(0);  // a later generation's layout, from n2 to the head
  auto to_head = may_tell_family(head, member("n2"));
  REQUIRE(to_head);
  CHECK(*to_head == 2);
  CHECK_FALSE(may_tell_family(head, member("intruder")));
}

TEST_CASE("a spawned launch joins its parent's family only, and never another user's") {
  LaunchSpec first = four_nodes(1);  // "L", the family's first launch
  first.user.uid = 1000;
  LaunchSpec child = spawned(2, 1000, 0);  // "C", spawned by L
  Sender from_launcher{kLauncherConn, Identity{Role::launcher, "l"}};
  CHECK(may_join_family(child, &first, &first, from_launcher));
  LaunchSpec grandchild = spawned(1, 1000, 0);
  grandchild.launch_id = "G";
  grandchild.spawned_by = wire::SpawnParent{"C", 0, "L"};
  child.spawned_by = wire::SpawnParent{"L", 0, "L"};
  CHECK(may_join_family(grandchild, &child, &first, from_launcher));
  // A family its parent is not of: refused, naming both.
  LaunchSpec stray = spawned(1, 1000, 0);
  stray.launch_id = "G";
  stray.spawned_by = wire::SpawnParent{"C", 0, "X"};
  CHECK(refused(may_join_family(stray, &child, nullptr, from_launcher),
                "it names family X, its parent's is L"));
  // Its parent gone here, its claimed family another user's: refused.
  LaunchSpec other = four_nodes(1);
  other.launch_id = "X";
  other.user.uid = 2000;
  CHECK(refused(may_join_family(stray, nullptr, &other, from_launcher), "another user"));
  CHECK(may_join_family(stray, nullptr, nullptr, from_launcher));  // nothing of it here
}
