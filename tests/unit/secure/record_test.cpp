// Sealed records after the handshake: large writes split into records, and every kind of
// interference (a flipped bit, a replayed, dropped or reordered record, a lying length, data
// after the final record) breaks the stream with a reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "secure_test_support.hpp"

using namespace lattice;
using namespace lattice::secure;
using namespace lattice::secure::testing;

namespace {

// Splits one direction's bytes into the stream header and its records.
struct Wire {
  std::string header;
  std::vector<std::string> records;
};

Wire split_records(const std::string& bytes) {
  Wire w;
  w.header = bytes.substr(0, kStreamHeaderBytes);
  size_t at = kStreamHeaderBytes;
  while (at + 4 <= bytes.size()) {
    size_t len = (size_t(uint8_t(bytes[at])) << 24) | (size_t(uint8_t(bytes[at + 1])) << 16) |
                 (size_t(uint8_t(bytes[at + 2])) << 8) | size_t(uint8_t(bytes[at + 3]));
    w.records.push_back(bytes.substr(at, 4 + len));
    at += 4 + len;
  }
  return w;
}

struct Established {
  ClusterKey key = key_of(9);
  Pair p{key, key};
  Established() { REQUIRE(p.handshake()); }
  Status to_responder(const std::string& bytes) {
    ChannelOutput out;
    auto st = p.responder.receive(bytes, out);
    plain += out.plaintext;
    return st;
  }
  std::string plain;
};

}  // namespace

TEST_CASE("a 1 MiB write goes out as records of at most 64 KiB and arrives whole") {
  Established e;
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  std::string wire = e.p.initiator.seal(big);
  auto w = split_records(wire);
  CHECK(w.records.size() == 16);
  for (auto& r : w.records) CHECK(r.size() <= kMaxRecordPlaintext + kRecordOverhead);
  REQUIRE(e.to_responder(wire));
  CHECK(e.plain == big);
}

TEST_CASE("a flipped bit anywhere in a record breaks the stream") {
  for (size_t i = 0; i < 40; ++i) {
    Established e;
    std::string wire = e.p.initiator.seal("a heartbeat or a launch request");
    size_t at = kStreamHeaderBytes + i;
    if (at >= wire.size()) break;
    wire[at] ^= 0x40;
    auto st = e.to_responder(wire);
    // A flipped length may only make the reader wait for bytes that never come; a later
    // deadline or EOF ends that. Anything else fails now.
    if (i < 4 && st) continue;
    REQUIRE_FALSE(st);
    CHECK(e.plain.empty());
  }
}

TEST_CASE("replayed, dropped and reordered records are refused") {
  Established e;
  std::string a = e.p.initiator.seal("first");
  std::string b = e.p.initiator.seal("second");
  std::string c = e.p.initiator.seal("third");
  std::string header = a.substr(0, kStreamHeaderBytes);
  std::string ra = a.substr(kStreamHeaderBytes);

  SUBCASE("replay") {
    REQUIRE(e.to_responder(a));
    auto st = e.to_responder(ra);
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("failed authentication") != std::string::npos);
  }
  SUBCASE("drop") {
    REQUIRE(e.to_responder(a));
    CHECK_FALSE(e.to_responder(c));
    CHECK(e.plain == "first");
  }
  SUBCASE("reorder") {
    REQUIRE(e.to_responder(header));
    CHECK_FALSE(e.to_responder(b));
  }
}

TEST_CASE("a record length beyond the limit is refused at once, holding 4 bytes") {
  Established e;
  std::string wire = e.p.initiator.seal("x").substr(0, kStreamHeaderBytes);
  wire += std::string("\x03\xc0\x00\x00", 4);  // 60 MiB claimed
  auto st = e.to_responder(wire);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("claims 62914560 bytes") != std::string::npos);
}

TEST_CASE("a trickled record costs only what arrived") {
  Established e;
  std::string wire = e.p.initiator.seal(std::string(60000, 'z'));
  ChannelOutput out;
  for (size_t i = 0; i < 1000; ++i) REQUIRE(e.p.responder.receive(wire.substr(i, 1), out));
  // The reader holds what came, not what the record will need.
  CHECK(out.plaintext.empty());
  REQUIRE(e.p.responder.receive(wire.substr(1000), out));
  CHECK(out.plaintext.size() == 60000);
}

TEST_CASE("the final record ends the stream; anything after it is refused") {
  Established e;
  std::string wire = e.p.initiator.seal("bye") + e.p.initiator.seal_final();
  REQUIRE(e.to_responder(wire));
  CHECK(e.p.responder.peer_finished());
  // The writer refuses to seal after its final record.
  CHECK(e.p.initiator.seal("more").empty());
}

TEST_CASE("records sealed before the handshake completes are not produced") {
  auto key = key_of(2);
  Channel c(Channel::Side::initiator, key, {Role::launcher, "l"});
  c.start();
  CHECK(c.seal("too early").empty());
}
