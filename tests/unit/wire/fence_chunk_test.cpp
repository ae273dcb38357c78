// Fence chunks round-trip up and down the tree; malformed packed entries are an error value.
#include "wire/fence_chunk.hpp"

#include <doctest/doctest.h>

#include "../fence/kv_views.hpp"
#include "rpc/session.hpp"

using namespace lattice;

TEST_CASE("fence chunks up and down, with an error, read back") {
  const fence::KvList entries{{"k", "v"}, {"key-2", std::string(300, 'x')}, {"e", ""}};
  fence::Chunk chunk = fence::test::chunk_of(entries, 7, 1, 3);
  auto up = wire::fence_chunk("L-4", 5, false, chunk, "");
  auto got = wire::decode_fence_up(up.envelope().asReader().getBody().getPmiFence());
  REQUIRE(got.ok());
  CHECK(got->launch_id == "L-4");
  CHECK(got->from == 5);
  CHECK(!got->down);
  CHECK(got->chunk.epoch == 7);
  CHECK(got->chunk.index == 1);
  CHECK(got->chunk.count == 3);
  CHECK(got->chunk.keys == 3);
  CHECK(fence::test::entries_of(got->chunk) == entries);
  fence::Chunk empty;
  empty.epoch = 7;
  auto down = wire::fence_chunk("L-4", 0, true, empty, "broken");
  auto failed = wire::decode_fence_down(down.envelope().asReader().getBody().getPmiFenceComplete());
  REQUIRE(failed.ok());
  CHECK(failed->down);
  CHECK(failed->error == "broken");
  CHECK(failed->chunk.entries->empty());
  CHECK(failed->chunk.keys == 0);
}

TEST_CASE("a fence chunk whose packed entries run past their end is an error, named") {
  rpc::Outgoing msg;
  auto f = msg.envelope().initBody().initPmiFence();
  f.setLaunchId("L-4");
  f.setFromNode(3);
  const std::string packed =
      "\x01k\x01v\x05"
      "abc";  // the second key claims 5 bytes, has 3
  f.setEntries(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(packed.data()), packed.size()));
  auto got = wire::decode_fence_up(msg.envelope().asReader().getBody().getPmiFence());
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().message ==
        "a fence chunk from node 3 for launch L-4 is malformed: packed fence entries: entry 1 at "
        "byte 4 has a length that is overlong or runs past the end (8 bytes)");
}

TEST_CASE("a full fence chunk is one segment, so its reader takes no lock per key") {
  // Keys and values of every length around a word boundary, filled to the chunk limit.
  fence::KvList store;
  size_t bytes = 0;
  for (size_t i = 0; bytes < fence::kDefaultChunkBytes; ++i) {
    store.emplace_back("key-" + std::to_string(i) + std::string(i % 9, 'k'),
                       std::string(40 + i % 17, 'v'));
    bytes += store.back().first.size() + store.back().second.size();
  }
  auto chunks = fence::make_chunks(3, fence::test::views(store), fence::kDefaultChunkBytes);
  REQUIRE(chunks.size() == 2);
  const std::string long_error(300, 'e');
  for (const auto& chunk : chunks)
    for (bool down : {false, true}) {
      auto msg = wire::fence_chunk("0b8f6a52-3c1e-4d2a-9f3b-6a1c2d3e4f50", 12, down, chunk,
                                   down ? long_error : "");
      CHECK(msg.message().getSegmentsForOutput().size() == 1);
      auto body = msg.envelope().asReader().getBody();
      auto got = down ? wire::decode_fence_down(body.getPmiFenceComplete())
                      : wire::decode_fence_up(body.getPmiFence());
      REQUIRE(got.ok());
      CHECK(*got->chunk.entries == *chunk.entries);
      CHECK(got->chunk.keys == chunk.keys);
    }
}
