// make_chunks and ChunkAssembly: sizes, order, empty stores, and every framing error.
#include "fence/chunk.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "kv_views.hpp"

using namespace lattice::fence;
using namespace lattice::fence::test;

namespace {

KvList numbered(int n, size_t value_bytes) {
  KvList out;
  for (int i = 0; i < n; ++i)
    out.emplace_back("k" + std::to_string(i), std::string(value_bytes, 'v'));
  return out;
}

size_t bytes_of(const KvList& list) {
  size_t total = 0;
  for (const auto& [key, value] : list) total += key.size() + value.size();
  return total;
}

}  // namespace

TEST_CASE("make_chunks: an empty store is one empty chunk") {
  auto chunks = make_chunks(3, {}, 100);
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].epoch == 3);
  CHECK(chunks[0].index == 0);
  CHECK(chunks[0].count == 1);
  CHECK(chunks[0].entries->empty());
  CHECK(chunks[0].keys == 0);
}

TEST_CASE("make_chunks: bounded chunks that concatenate back to the store") {
  const KvList store = numbered(100, 30);  // 32-33 bytes per entry
  for (size_t limit : {size_t{1}, size_t{40}, size_t{100}, size_t{1000}, kDefaultChunkBytes}) {
    CAPTURE(limit);
    auto chunks = make_chunks(9, views(store), limit);
    KvList joined;
    for (size_t i = 0; i < chunks.size(); ++i) {
      CHECK(chunks[i].epoch == 9);
      CHECK(chunks[i].index == i);
      CHECK(chunks[i].count == chunks.size());
      const KvList entries = entries_of(chunks[i]);
      REQUIRE_FALSE(entries.empty());
      CHECK(chunks[i].keys == entries.size());
      if (entries.size() > 1) CHECK(bytes_of(entries) <= limit);
      joined.insert(joined.end(), entries.begin(), entries.end());
    }
    CHECK(joined == store);
    if (limit < 33) CHECK(chunks.size() == store.size());  // each entry alone
    if (limit == kDefaultChunkBytes) CHECK(chunks.size() == 1);
  }
}

TEST_CASE("make_chunks: an entry over the limit travels alone, then packing resumes") {
  KvList store{{"a", "1"}, {"big", std::string(500, 'x')}, {"b", "2"}, {"c", "3"}};
  auto chunks = make_chunks(1, views(store), 10);
  REQUIRE(chunks.size() == 3);
  CHECK(entries_of(chunks[0]).size() == 1);
  CHECK(entries_of(chunks[1]).at(0).first == "big");
  CHECK(entries_of(chunks[2]).size() == 2);
}

TEST_CASE("ChunkAssembly: any order, then take() in index order") {
  const KvList store = numbered(10, 5);
  auto chunks = make_chunks(1, views(store), 14);
  REQUIRE(chunks.size() == 5);
  ChunkAssembly assembly;
  CHECK_FALSE(assembly.started());
  for (uint32_t i : {3u, 0u, 4u, 2u}) {
    REQUIRE(assembly.add(chunks[i]).ok());
    CHECK_FALSE(assembly.complete());
  }
  CHECK(assembly.started());
  REQUIRE(assembly.add(chunks[1]).ok());
  CHECK(assembly.complete());
  CHECK(owned(assembly.take()) == store);
  CHECK_FALSE(assembly.started());
}

TEST_CASE("ChunkAssembly: framing errors are refused and change nothing") {
  ChunkAssembly assembly;
  Chunk zero;
  zero.count = 0;
  auto status = assembly.add(zero);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message.find("count is 0") != std::string::npos);

  Chunk past;
  past.index = 2;
  past.count = 2;
  CHECK_FALSE(assembly.add(past).ok());
  CHECK_FALSE(assembly.started());

  Chunk first = chunk_of({{"x", "1"}}, 1, 0, 2);
  REQUIRE(assembly.add(first).ok());

  Chunk again = chunk_of({{"x", "2"}}, 1, 0, 2);
  status = assembly.add(again);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message.find("duplicate") != std::string::npos);

  Chunk recount;
  recount.index = 1;
  recount.count = 3;
  status = assembly.add(recount);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message.find("changed") != std::string::npos);
  CHECK_FALSE(assembly.complete());

  Chunk second = chunk_of({{"y", "1"}}, 1, 1, 2);
  REQUIRE(assembly.add(second).ok());
  REQUIRE(assembly.complete());
  CHECK(owned(assembly.take()) == KvList{{"x", "1"}, {"y", "1"}});
}
