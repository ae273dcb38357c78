// The store (visibility after fences, limits, per-rank accounting, reserved keys) and the
// PMIX_Ring computation.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "pmi/kvs.hpp"
#include "pmi/ring.hpp"

namespace lattice::pmi {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("kvs: puts are visible only after the fence publishes them") {
  Kvs kvs{Limits{}};
  REQUIRE(kvs.put(0, "a", "1").ok());
  REQUIRE(kvs.put(1, "b", "2").ok());
  REQUIRE(kvs.put(0, "a", "3").ok());  // re-put within the epoch: latest value, first position
  CHECK(!kvs.get("a"));
  KvList pending = kvs.take_pending();
  CHECK(pending == KvList{{"a", "3"}, {"b", "2"}});
  CHECK(kvs.take_pending().empty());
  kvs.publish(owning_store(pending));
  REQUIRE(kvs.get("a"));
  CHECK(*kvs.get("a") == "3");
  CHECK(*kvs.get("b") == "2");
}

TEST_CASE("kvs: reserved keys travel but are never visible") {
  Kvs kvs{Limits{}};
  kvs.put_reserved(ring_key(3), "x");
  KvList pending = kvs.take_pending();
  REQUIRE(pending.size() == 1);
  CHECK(is_reserved_key(pending[0].first));
  kvs.publish(owning_store(pending));
  CHECK(!kvs.get(pending[0].first));
  CHECK_FALSE(check_key(pending[0].first, Limits{}).ok());  // no client can name it
}

TEST_CASE("kvs: a sorted store holding a reserved key is still filtered") {
  Kvs kvs{Limits{}};
  KvList store{{ring_key(0), "r"}, {"a", "1"}, {"b", "2"}};  // sorted: the mark sorts first
  REQUIRE(std::is_sorted(store.begin(), store.end()));
  kvs.publish(owning_store(store));
  CHECK(!kvs.get(ring_key(0)));
  REQUIRE(kvs.get("b"));
  CHECK(*kvs.get("b") == "2");
}

TEST_CASE("kvs: many fences, unsorted and overlapping stores: the newest value of every key") {
  // Checked against a plain map fed the same stores, so the run merging (kvs.cpp) shows no
  // lost, stale or duplicated key however the fences pile up.
  Kvs kvs{Limits{}};
  std::map<std::string, std::string> model;
  unsigned seed = 7;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
  for (int fence = 0; fence < 300; ++fence) {
    KvList store;
    size_t n = next() % 40;  // including empty fences
    for (size_t i = 0; i < n; ++i) {
      std::string key = "k" + std::to_string(next() % 500);
      std::string value = std::to_string(fence) + "." + std::to_string(i);
      store.emplace_back(key, value);
      model[key] = value;  // within a store, the later entry of a key wins
    }
    if (fence % 3 == 0)  // sorted as the tree delivers stores (stably: duplicates keep order)
      std::stable_sort(store.begin(), store.end(),
                       [](auto& a, auto& b) { return a.first < b.first; });
    kvs.publish(owning_store(store));
    if (fence % 2 == 0) kvs.compact();  // gets are right with merges owed, or taken
    if (fence % 10 == 9)
      for (const auto& entry : model) {  // not a structured binding: doctest's macros capture
        auto got = kvs.get(entry.first);
        REQUIRE_MESSAGE(got, entry.first);
        CHECK(*got == entry.second);
      }
  }
  CHECK(!kvs.get("k500"));
  CHECK(!kvs.get(""));
}

TEST_CASE("kvs: no fence merges the whole store at once, and gets see every key meanwhile") {
  // A launch's nodes publish the same stores, so a merge of the whole store at one fence
  // stalls them all together: each fence's compact() merges a bounded step (kvs.cpp), never
  // most of the store; merges still keep up, so few runs are ever searched. publish() itself
  // merges nothing: the fence's ranks are answered first.
  Kvs kvs{Limits{}};
  const size_t per_fence = 1024;
  size_t total = 0;
  for (int fence = 0; fence < 100; ++fence) {
    KvList store;
    for (size_t i = 0; i < per_fence; ++i)
      store.emplace_back("f" + std::to_string(fence) + "-" + std::to_string(i), "v");
    std::sort(store.begin(), store.end());
    const size_t runs_before = kvs.runs();
    kvs.publish(owning_store(store));
    CHECK(kvs.runs() == runs_before + 1);  // a new run, nothing merged yet
    const size_t merged = kvs.compact();
    total += per_fence;
    CAPTURE(fence);
    if (fence < 8) CHECK(merged == 0);  // a few runs are left as they are
    if (fence == 8) CHECK(merged > 0);
    if (fence >= 11) CHECK(merged <= total * 3 / 4);
    CHECK(kvs.compact() == 0);  // owed once per publish
    CHECK(kvs.runs() <= 16);
    for (int back = 0; back <= fence; back += 7) {  // old and new keys alike
      auto got = kvs.get("f" + std::to_string(fence - back) + "-" + std::to_string(per_fence - 1));
      REQUIRE(got);
      CHECK(*got == "v");
    }
  }
}

TEST_CASE("kvs: a value replaced fence after fence does not keep every old store alive") {
  // The store views the bytes its fences arrived in; 2,000 fences re-putting one 1 KiB value
  // (2 MB in all) must not pin them all.
  Kvs kvs{Limits{}};
  for (int fence = 0; fence < 2000; ++fence) {
    const std::string value(1024, static_cast<char>('a' + fence % 26));
    kvs.publish(owning_store({{"card", value}, {"n" + std::to_string(fence % 8), "x"}}));
    kvs.compact();
    auto got = kvs.get("card");
    REQUIRE(got);
    CHECK(*got == value);
  }
  CHECK(kvs.bytes_held() < 16 * 1024);
  REQUIRE(kvs.get("n7"));
  CHECK(*kvs.get("n7") == "x");
}

TEST_CASE("kvs: key and value checks") {
  Limits l;
  for (const char* good : {"-bcast-1-0", "hostname[3]", "x-seg-1/2", "PMI_process_mapping"})
    CHECK(check_key(good, l).ok());
  CHECK(check_key(std::string(64, 'k'), l).ok());
  CHECK(has(check_key(std::string(65, 'k'), l).error().message, "64-byte key limit"));
  for (const char* bad : {"", "a b", "a=b", "a;b", "a\x7f", "\x01ring"})
    CHECK_FALSE(check_key(bad, l).ok());
  CHECK(check_value("k", std::string(1024, 'v'), l).ok());
  CHECK(has(check_value("k", std::string(1025, 'v'), l).error().message,
            "1025 bytes, over the 1024-byte value limit"));
  CHECK_FALSE(check_value("k", std::string("a\0b", 3), l).ok());
  Kvs kvs{l};
  CHECK(has(kvs.put(0, "k", std::string(2000, 'v')).error().message, "value limit"));
}

TEST_CASE("kvs: per-rank key and byte budgets") {
  Limits l;
  l.max_keys_per_rank = 3;
  l.max_bytes_per_rank = 100;
  Kvs kvs{l};
  CHECK(kvs.put(0, "a", "1").ok());
  CHECK(kvs.put(0, "b", "1").ok());
  CHECK(kvs.put_node_attr(0, "c", "1").ok());  // node attributes count too
  CHECK(kvs.put(0, "a", "22").ok());           // re-put: no new key
  auto refused = kvs.put(0, "d", "1");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "rank 0 already stores 3 keys, the per-rank key limit");
  CHECK(kvs.put(1, "d", "1").ok());  // another rank has its own budget
  CHECK(has(kvs.put(1, "e", std::string(99, 'v')).error().message, "100-byte per-rank limit"));
  CHECK(kvs.put(1, "d", std::string(98, 'v')).ok());  // replacing counts the new size only
}

TEST_CASE("kvs: node attributes are visible at once") {
  Kvs kvs{Limits{}};
  CHECK(kvs.node_attr("shm") == nullptr);
  REQUIRE(kvs.put_node_attr(2, "shm", "/dev/shm/x").ok());
  REQUIRE(kvs.node_attr("shm"));
  CHECK(*kvs.node_attr("shm") == "/dev/shm/x");
  CHECK(!kvs.get("shm"));
}

TEST_CASE("ring: inputs round-trip through a merged store") {
  KvList merged = {{ring_key(0), encode_ring_input({1, "l,0", "r;0"})},
                   {"ordinary", "value"},
                   {ring_key(1), encode_ring_input({2, "", "12,3"})},
                   {ring_key(2), "garbage"}};
  auto inputs = ring_inputs(owning_store(merged).entries);
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].count == 1);
  CHECK(inputs[0].left == "l,0");
  CHECK(inputs[0].right == "r;0");
  CHECK(inputs[1].count == 2);
  CHECK(inputs[1].left.empty());
  CHECK(inputs[1].right == "12,3");
}

TEST_CASE("ring: Slurm's outputs - prefix counts, neighbours' values, wrapping") {
  std::map<int, RingValues> in = {
      {0, {1, "L0", "R0"}}, {1, {1, "L1", "R1"}}, {2, {1, "L2", "R2"}}, {3, {1, "L3", "R3"}}};
  auto out = ring_outputs(in);
  REQUIRE(out.size() == 4);
  for (int r = 0; r < 4; ++r) {
    CHECK(out[r].count == r);
    CHECK(out[r].left == "R" + std::to_string((r + 3) % 4));
    CHECK(out[r].right == "L" + std::to_string((r + 1) % 4));
  }
  // Counts other than 1 (a subtree's summary in Slurm's tree) and a single participant.
  auto sums = ring_outputs({{0, {3, "a", "b"}}, {5, {2, "c", "d"}}});
  CHECK(sums[0].count == 0);
  CHECK(sums[5].count == 3);
  CHECK(sums[5].left == "b");
  CHECK(sums[5].right == "a");
  auto alone = ring_outputs({{4, {1, "x", "y"}}});
  CHECK(alone[4].left == "y");
  CHECK(alone[4].right == "x");
}

}  // namespace
}  // namespace lattice::pmi
