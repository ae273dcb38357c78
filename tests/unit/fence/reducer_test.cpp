// Reducer driven call by call: the up and down steps, the merge rule, future-epoch buffering and
// every kind of Reject, on small hand-built trees.
#include "fence/reducer.hpp"

#include <doctest/doctest.h>

#include "kv_views.hpp"

using namespace lattice::fence;
using namespace lattice::fence::test;

namespace {

template <class T>
std::vector<T> only(const std::vector<Action>& actions) {
  std::vector<T> out;
  for (const auto& a : actions)
    if (auto* x = std::get_if<T>(&a)) out.push_back(*x);
  return out;
}

Chunk whole(uint64_t epoch, const KvList& entries) { return chunk_of(entries, epoch); }

// The single Reject in `actions`, whose reason must mention `word`.
void check_reject(const std::vector<Action>& actions, int from, const std::string& word) {
  REQUIRE(actions.size() == 1);
  const auto* r = std::get_if<Reject>(&actions[0]);
  REQUIRE(r != nullptr);
  CHECK(r->from == from);
  CHECK_MESSAGE(r->why.find(word) != std::string::npos, r->why);
}

}  // namespace

TEST_CASE("reducer: a single node completes at once, sorted, later local put wins") {
  Reducer r(0, Tree(1, 0, 2));
  auto actions = r.local_ready(1, {{"b", "1"}, {"a", "1"}, {"b", "2"}});
  auto done = only<Complete>(actions);
  REQUIRE(actions.size() == 1);
  REQUIRE(done.size() == 1);
  CHECK(done[0].epoch == 1);
  CHECK(owned(done[0].merged) == KvList{{"a", "1"}, {"b", "2"}});
  CHECK(r.completed_epoch() == 1);
  CHECK(r.local_entered(1));
  CHECK_FALSE(r.local_entered(2));
  check_reject(r.local_ready(1, {}), 0, "stale");
  check_reject(r.local_ready(3, {}), 0, "ahead");
  CHECK(only<Complete>(r.local_ready(2, {})).at(0).merged.entries.empty());
}

TEST_CASE("reducer: the root merges children in order, then itself, and fans out") {
  Reducer root(0, Tree(3, 0, 2));
  CHECK(root.children_pending(1) == std::vector<int>{1, 2});
  CHECK_FALSE(root.begun(1));  // nothing of fence 1 here yet: no fence is pending
  CHECK(root.from_child(2, whole(1, {{"k", "from2"}, {"j", "from2"}, {"c2", "x"}})).empty());
  CHECK(root.begun(1));
  CHECK(root.children_pending(1) == std::vector<int>{1});
  CHECK(root.local_ready(1, {{"k", "root"}}).empty());
  CHECK(root.local_entered(1));
  auto actions = root.from_child(1, whole(1, {{"k", "from1"}, {"j", "from1"}}));

  const KvList merged{{"c2", "x"}, {"j", "from2"}, {"k", "root"}};
  auto downs = only<SendDown>(actions);
  REQUIRE(downs.size() == 1);  // one chunk, one action, both children
  CHECK(downs[0].children == std::vector<int>{1, 2});
  for (const auto& d : downs) {
    CHECK(d.chunk.epoch == 1);
    CHECK(d.chunk.count == 1);
    CHECK(entries_of(d.chunk) == merged);
  }
  REQUIRE(std::holds_alternative<Complete>(actions.back()));  // forwarding comes first
  CHECK(owned(std::get<Complete>(actions.back()).merged) == merged);
  CHECK(root.completed_epoch() == 1);
  CHECK(root.children_pending(1).empty());
  CHECK(root.children_pending(2) == std::vector<int>{1, 2});
  CHECK(root.begun(1));
  CHECK_FALSE(root.begun(2));
}

TEST_CASE("reducer: a leaf sends up in chunks and completes from its parent's chunks") {
  Reducer leaf(2, Tree(3, 0, 2), 10);
  check_reject(leaf.from_parent(whole(1, {})), 0, "before this node sent");
  auto ups = only<SendUp>(leaf.local_ready(1, {{"a", "123456"}, {"b", "123456"}, {"c", "1"}}));
  REQUIRE(ups.size() == 2);
  CHECK(ups[0].chunk.count == 2);
  CHECK(ups[1].chunk.index == 1);
  CHECK(leaf.completed_epoch() == 0);

  Chunk second = chunk_of({{"y", "2"}}, 1, 1, 2);
  CHECK(leaf.from_parent(second).empty());  // out of order: waits, a leaf forwards nothing
  check_reject(leaf.from_parent(second), 0, "duplicate");
  Chunk first = chunk_of({{"x", "1"}}, 1, 0, 2);
  auto done = only<Complete>(leaf.from_parent(first));
  REQUIRE(done.size() == 1);
  CHECK(owned(done[0].merged) == KvList{{"x", "1"}, {"y", "2"}});
  check_reject(leaf.from_parent(first), 0, "stale");
}

TEST_CASE("reducer: an intermediate node forwards each chunk as it arrives") {
  Reducer mid(1, Tree(4, 0, 1));  // chain 0 -> 1 -> 2 -> 3
  CHECK(mid.from_child(2, whole(1, {{"c", "1"}})).empty());
  auto ups = only<SendUp>(mid.local_ready(1, {{"m", "1"}}));
  REQUIRE(ups.size() == 1);
  CHECK(entries_of(ups[0].chunk) == KvList{{"c", "1"}, {"m", "1"}});

  for (uint32_t i : {2u, 0u, 1u}) {
    Chunk c = chunk_of({{"k" + std::to_string(i), "v"}}, 1, i, 3);
    auto actions = mid.from_parent(c);
    auto downs = only<SendDown>(actions);
    REQUIRE(downs.size() == 1);
    CHECK(downs[0].children == std::vector<int>{2});
    CHECK(downs[0].chunk.index == i);
    CHECK(downs[0].chunk.entries.get() == c.entries.get());  // the very bytes, shared
    CHECK(only<Complete>(actions).size() == (i == 1 ? 1u : 0u));
  }
  CHECK(mid.completed_epoch() == 1);
}

TEST_CASE("reducer: a child's next-epoch contribution is buffered until local ranks enter") {
  Reducer root(0, Tree(2, 0, 1));
  REQUIRE(root.from_child(1, whole(1, {{"a", "1"}})).empty());
  REQUIRE(only<Complete>(root.local_ready(1, {})).size() == 1);

  CHECK(root.from_child(1, whole(2, {{"b", "2"}})).empty());  // child already in epoch 2
  CHECK(root.children_pending(2).empty());
  CHECK_FALSE(root.local_entered(2));
  check_reject(root.from_child(1, whole(3, {})), 1, "ahead");
  check_reject(root.from_child(1, whole(1, {})), 1, "stale");
  auto done = only<Complete>(root.local_ready(2, {{"c", "3"}}));
  REQUIRE(done.size() == 1);
  CHECK(done[0].epoch == 2);
  CHECK(owned(done[0].merged) == KvList{{"b", "2"}, {"c", "3"}});
}

TEST_CASE("reducer: malformed, misdirected and duplicate input is rejected") {
  Reducer root(0, Tree(5, 0, 2));  // children 1, 2; node 3 is 1's child
  check_reject(root.from_child(3, whole(1, {})), 3, "not a child");
  check_reject(root.from_child(7, whole(1, {})), 7, "not a child");
  check_reject(root.from_parent(whole(1, {})), -1, "no parent");
  check_reject(root.from_child(1, whole(0, {})), 1, "stale");

  Chunk c = whole(1, {});
  c.count = 0;
  check_reject(root.from_child(1, c), 1, "count is 0");
  c.count = 2;
  c.index = 2;
  check_reject(root.from_child(1, c), 1, "not below");
  c.index = 0;
  CHECK(root.from_child(1, c).empty());
  check_reject(root.from_child(1, c), 1, "duplicate");
  c.index = 1;
  c.count = 3;
  check_reject(root.from_child(1, c), 1, "changed");
  c.count = 2;
  CHECK(root.from_child(1, c).empty());
  CHECK(root.children_pending(1) == std::vector<int>{2});
  check_reject(root.from_child(1, c), 1, "duplicate");

  CHECK(root.local_ready(1, {}).empty());
  check_reject(root.local_ready(1, {}), 0, "duplicate");

  Reducer mid(1, Tree(5, 0, 2));
  CHECK(mid.from_child(3, whole(1, {})).empty());
  CHECK(mid.from_child(4, whole(1, {})).empty());
  CHECK(only<SendUp>(mid.local_ready(1, {})).size() == 1);
  check_reject(mid.from_child(3, whole(1, {})), 3, "already complete");
}
