// Packed fence entries: the exact bytes, round trips across the one- and two-byte length
// boundary, and every malformed input refused with where it went wrong.
#include "fence/kv_pack.hpp"

#include <doctest/doctest.h>

#include <string>

#include "kv_views.hpp"

using namespace lattice::fence;
using namespace lattice::fence::test;

namespace {

std::string packed(const KvList& entries) {
  std::string out(packed_size(views(entries)), '\0');
  pack(views(entries), out.data());
  return out;
}

// What count_packed and view_packed make of `bytes`, as an owned list.
lattice::Result<KvList> unpack(std::string_view bytes) {
  auto count = count_packed(bytes);
  if (!count) return count.error();
  std::vector<lattice::KvView> out;
  view_packed(bytes, out);
  CHECK(out.size() == *count);
  return owned(out);
}

}  // namespace

TEST_CASE("entries pack as length, key, length, value, lengths in LEB128") {
  CHECK(packed({}).empty());
  CHECK(packed({{"k", "v"}, {"key", ""}}) == std::string("\x01k\x01v\x03key\x00", 9));
  // 200 = 0xc8: low seven bits first, with the continuation bit, then 1.
  std::string value(200, 'v');
  CHECK(packed({{"k", value}}) == std::string("\x01k\xc8\x01", 4) + value);
  // The fence bench's entry: 9-byte key, 64-byte value -> 75 bytes (a capnp list took 104).
  CHECK(packed({{"f12-345-0", std::string(64, 'x')}}).size() == 75);
}

TEST_CASE("entries round-trip across the length boundaries, in order, duplicates kept") {
  KvList entries;
  for (size_t n : {0, 1, 127, 128, 129, 16383, 16384, 70000})
    entries.emplace_back("key-" + std::to_string(n),
                         std::string(n, static_cast<char>('a' + n % 26)));
  entries.emplace_back(std::string(128, 'K'), "long key");
  entries.emplace_back("key-0", "again");  // the reducer decides what a repeat means, not this
  std::string bytes = packed(entries);
  CHECK(bytes.size() == packed_size(views(entries)));
  auto back = unpack(bytes);
  REQUIRE(back.ok());
  CHECK(*back == entries);
  // Bytes of every value survive, NUL and high bytes included.
  std::string binary("\x00\xff\x80\x7f", 4);
  auto odd = unpack(packed({{"b", binary}}));
  REQUIRE(odd.ok());
  CHECK((*odd)[0].second == binary);
}

TEST_CASE("view_packed stops at bytes count_packed would refuse, instead of reading past them") {
  const std::string bytes("\x01k\x01v\x01k\x09vv", 9);
  std::vector<lattice::KvView> out;
  view_packed(bytes, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == lattice::KvView("k", "v"));
}

TEST_CASE("malformed packed entries are refused, saying which entry and where") {
  auto refused = [](const std::string& bytes) {
    auto got = unpack(bytes);
    REQUIRE_FALSE(got.ok());
    return got.error().message;
  };
  // A key with no value length.
  CHECK(refused(std::string("\x01k", 2)) ==
        "packed fence entries: entry 0 at byte 0 has a length that is overlong or runs past the "
        "end (2 bytes)");
  // A value longer than what is left.
  CHECK(refused(std::string("\x01k\x01v\x01k\x09vv", 9)).find("entry 1 at byte 4") !=
        std::string::npos);
  // A length cut off in the middle of its varint.
  CHECK(refused(std::string("\x01k\x80", 3)).find("entry 0") != std::string::npos);
  // Five length bytes: more than any frame needs, refused before reading on.
  CHECK(refused(std::string("\x80\x80\x80\x80\x01", 5)).find("overlong") != std::string::npos);
  // A length of 2^27 in four bytes is read, and refused for running past the end.
  CHECK(refused(std::string("\x80\x80\x80\x40", 4)).find("runs past the end") != std::string::npos);
}
