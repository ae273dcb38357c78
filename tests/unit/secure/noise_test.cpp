// The Noise XXpsk0 core (src/secure/noise.hpp): both roles against docs/protocol.md's `vectors
// noise` block, which npm noise-handshake made (tests/node_client/noise_vector.mjs), so that the
// core matches an implementation that is not ours byte for byte; then round trips with random
// keys and refusals of a wrong psk, tampering, truncation, low-order keys and calls out of turn.
#include "secure/noise.hpp"

#include <doctest/doctest.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "base/strings.hpp"
#include "protocol_vectors.hpp"
#include "secure/secret.hpp"

using namespace lattice;
using namespace lattice::secure;
using namespace lattice::secure::noise;
using lattice::testing::ProtocolVectors;

namespace {

using Key = std::array<uint8_t, kKeyBytes>;

const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
template <size_t N>
std::string hex(const std::array<uint8_t, N>& a) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(a.data()), N));
}
std::string hex(const Secret& s) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(s.data()), s.size()));
}
// Compared as hex, so that a failure shows both values in a form the document can take.
std::string hex(std::string_view s) { return to_hex(s); }

Key random_key() {
  Key k;
  random_bytes(k.data(), k.size());
  return k;
}

bool says(const Error& error, std::string_view what) {
  return error.message.find(what) != std::string::npos;
}

// Two sides with their own keys; the messages they exchanged.
struct Run {
  Key psk = random_key(), initiator_static = random_key(), responder_static = random_key();
  std::string prologue = "prologue";
  std::optional<XXpsk0> initiator, responder;
  std::string m1, m2, m3;

  Run() { reset(); }
  void reset() {
    initiator.emplace(XXpsk0::Role::initiator, prologue, psk.data(), initiator_static.data());
    responder.emplace(XXpsk0::Role::responder, prologue, psk.data(), responder_static.data());
  }
  // Runs up to (not including) the read of message `upto` (1..3); the messages are kept.
  void until_read_of(int upto) {
    m1 = initiator->write_message("").value();
    if (upto == 1) return;
    REQUIRE(responder->read_message(m1));
    m2 = responder->write_message("agent").value();
    if (upto == 2) return;
    REQUIRE(initiator->read_message(m2));
    m3 = initiator->write_message("launcher").value();
  }
};

}  // namespace

TEST_CASE("docs/protocol.md: both roles make and accept noise-handshake's XXpsk0 vector") {
  auto loaded = ProtocolVectors::load("noise");
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  ProtocolVectors& v = loaded.value();
  const std::string& psk = v.bytes("psk");
  const std::string& prologue = v.bytes("prologue");
  const std::string& i_static = v.bytes("initiator_static_secret");
  const std::string& r_static = v.bytes("responder_static_secret");
  REQUIRE(psk.size() == kKeyBytes);
  REQUIRE(i_static.size() == kKeyBytes);
  REQUIRE(r_static.size() == kKeyBytes);
  CHECK(hex(public_key_of(u8(i_static))) == hex(v.bytes("initiator_static_public")));
  CHECK(hex(public_key_of(u8(r_static))) == hex(v.bytes("responder_static_public")));

  XXpsk0 initiator(XXpsk0::Role::initiator, prologue, u8(psk), u8(i_static));
  XXpsk0 responder(XXpsk0::Role::responder, prologue, u8(psk), u8(r_static));
  initiator.fix_ephemeral_for_test_vectors(u8(v.bytes("initiator_ephemeral_secret")));
  responder.fix_ephemeral_for_test_vectors(u8(v.bytes("responder_ephemeral_secret")));

  // Each side writes the document's message and reads the document's (not its peer's) bytes.
  auto m1 = initiator.write_message(v.bytes("payload_1"));
  REQUIRE(m1);
  CHECK(hex(*m1) == hex(v.bytes("m1")));
  auto p1 = responder.read_message(v.bytes("m1"));
  REQUIRE_MESSAGE(p1.ok(), (p1.ok() ? "" : p1.error().message));
  CHECK(*p1 == v.bytes("payload_1"));

  auto m2 = responder.write_message(v.bytes("payload_2"));
  REQUIRE(m2);
  CHECK(hex(*m2) == hex(v.bytes("m2")));
  auto p2 = initiator.read_message(v.bytes("m2"));
  REQUIRE_MESSAGE(p2.ok(), (p2.ok() ? "" : p2.error().message));
  CHECK(*p2 == v.bytes("payload_2"));
  CHECK(hex(initiator.remote_static()) == hex(v.bytes("responder_static_public")));

  auto m3 = initiator.write_message(v.bytes("payload_3"));
  REQUIRE(m3);
  CHECK(hex(*m3) == hex(v.bytes("m3")));
  auto p3 = responder.read_message(v.bytes("m3"));
  REQUIRE_MESSAGE(p3.ok(), (p3.ok() ? "" : p3.error().message));
  CHECK(*p3 == v.bytes("payload_3"));
  CHECK(hex(responder.remote_static()) == hex(v.bytes("initiator_static_public")));

  REQUIRE(initiator.complete());
  REQUIRE(responder.complete());
  CHECK(hex(initiator.handshake_hash()) == hex(v.bytes("handshake_hash")));
  CHECK(hex(responder.handshake_hash()) == hex(v.bytes("handshake_hash")));
  Secret i_to_r(kKeyBytes), r_to_i(kKeyBytes), r_i_to_r(kKeyBytes), r_r_to_i(kKeyBytes);
  REQUIRE(initiator.split(i_to_r.data(), r_to_i.data()));
  REQUIRE(responder.split(r_i_to_r.data(), r_r_to_i.data()));
  CHECK(hex(i_to_r) == hex(v.bytes("split_key_i_to_r")));
  CHECK(hex(r_i_to_r) == hex(v.bytes("split_key_i_to_r")));
  CHECK(hex(r_to_i) == hex(v.bytes("split_key_r_to_i")));
  CHECK(hex(r_r_to_i) == hex(v.bytes("split_key_r_to_i")));
  CHECK(join(v.unused(), ", ") == "");
}

TEST_CASE("noise: random keys agree end to end, with the documented message sizes") {
  Run run;
  run.until_read_of(3);
  CHECK(run.m1.size() == kMessage1Bytes);
  CHECK(run.m1.size() == 48);
  CHECK(run.m2.size() == 96 + 5);
  CHECK(run.m3.size() == 64 + 8);
  auto last = run.responder->read_message(run.m3);
  REQUIRE(last);
  CHECK(*last == "launcher");
  REQUIRE(run.initiator->complete());
  REQUIRE(run.responder->complete());
  CHECK(run.initiator->remote_static() == public_key_of(run.responder_static.data()));
  CHECK(run.responder->remote_static() == public_key_of(run.initiator_static.data()));
  CHECK(run.initiator->handshake_hash() == run.responder->handshake_hash());

  Secret a(kKeyBytes), b(kKeyBytes), c(kKeyBytes), d(kKeyBytes);
  REQUIRE(run.initiator->split(a.data(), b.data()));
  REQUIRE(run.responder->split(c.data(), d.data()));
  CHECK(hex(a) == hex(c));
  CHECK(hex(b) == hex(d));
  CHECK(hex(a) != hex(b));
  // Split once: the chaining key is gone, and a second call says so and hands out zeros.
  auto again = run.initiator->split(a.data(), b.data());
  REQUIRE_FALSE(again);
  CHECK(hex(a) == std::string(2 * kKeyBytes, '0'));

  // Another handshake with the same keys: fresh ephemerals, so other messages and keys.
  Run other;
  other.psk = run.psk;
  other.initiator_static = run.initiator_static;
  other.responder_static = run.responder_static;
  other.reset();
  other.until_read_of(3);
  CHECK(other.m1 != run.m1);
}

TEST_CASE("noise: a responder with another psk refuses message 1") {
  Run run;
  run.until_read_of(1);
  Key other_psk = run.psk;
  other_psk[0] ^= 1;
  XXpsk0 responder(XXpsk0::Role::responder, run.prologue, other_psk.data(),
                   run.responder_static.data());
  auto read = responder.read_message(run.m1);
  REQUIRE_FALSE(read);
  CHECK(says(read.error(), "the peer's proof does not verify"));
  // Failed for good: nothing more is read or written.
  CHECK_FALSE(responder.read_message(run.m1));
  CHECK_FALSE(responder.write_message(""));
  CHECK(responder.failed());

  // Another prologue is refused the same way (it is in h, the AEAD's additional data).
  XXpsk0 wrong_prologue(XXpsk0::Role::responder, "another", run.psk.data(),
                        run.responder_static.data());
  CHECK_FALSE(wrong_prologue.read_message(run.m1));
}

TEST_CASE("noise: any flipped byte of message 2 or 3 is refused") {
  // Each flip on a fresh pair: a failed read fails the side for good.
  Run run;
  run.until_read_of(3);
  const std::string m2 = run.m2, m3 = run.m3;
  for (size_t i = 0; i < m2.size(); ++i) {
    Run r;
    r.until_read_of(2);
    std::string tampered = r.m2;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x40);
    auto read = r.initiator->read_message(tampered);
    CHECK_MESSAGE(!read.ok(), "byte ", i, " of m2");
    CHECK(r.initiator->failed());
    CHECK_FALSE(r.initiator->write_message(""));
  }
  for (size_t i = 0; i < m3.size(); ++i) {
    Run r;
    r.until_read_of(3);
    std::string tampered = r.m3;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
    CHECK_MESSAGE(!r.responder->read_message(tampered).ok(), "byte ", i, " of m3");
    CHECK_FALSE(r.responder->complete());
  }
}

TEST_CASE("noise: calls out of turn are refused and change nothing") {
  Run run;
  auto early = run.initiator->read_message(std::string(48, '\0'));
  REQUIRE_FALSE(early);
  CHECK(says(early.error(), "turn"));
  CHECK_FALSE(run.initiator->failed());
  auto first = run.responder->write_message("");
  REQUIRE_FALSE(first);
  CHECK(says(first.error(), "turn"));
  Secret a(kKeyBytes), b(kKeyBytes);
  CHECK_FALSE(run.initiator->split(a.data(), b.data()));

  run.until_read_of(1);
  CHECK_FALSE(run.initiator->write_message(""));  // its turn to read now
  REQUIRE(run.responder->read_message(run.m1));
  CHECK_FALSE(run.responder->read_message(run.m1));  // its turn to write
  run.m2 = run.responder->write_message("").value();
  REQUIRE(run.initiator->read_message(run.m2));
  run.m3 = run.initiator->write_message("").value();
  REQUIRE(run.initiator->complete());
  CHECK_FALSE(run.initiator->write_message(""));
  CHECK_FALSE(run.initiator->read_message(run.m2));
  REQUIRE(run.responder->read_message(run.m3));
  CHECK(run.responder->complete());
  CHECK_FALSE(run.responder->read_message(run.m3));
}

TEST_CASE("noise: a low-order ephemeral key is an unusable key") {
  // Points of small order: all zeros, and u = 1; X25519 with them gives all zeros.
  const std::string low_order[] = {std::string(kKeyBytes, '\0'),
                                   std::string("\x01") + std::string(kKeyBytes - 1, '\0')};
  for (const std::string& point : low_order) {
    Run run;
    run.until_read_of(2);
    std::string m2 = point + run.m2.substr(kKeyBytes);
    auto read = run.initiator->read_message(m2);
    REQUIRE_FALSE(read);
    CHECK(says(read.error(), "unusable key"));
    CHECK(run.initiator->failed());
  }
}

TEST_CASE("noise: every truncation of every message is refused without a crash") {
  Run run;
  run.until_read_of(3);
  for (int message = 1; message <= 3; ++message) {
    const std::string& whole = message == 1 ? run.m1 : message == 2 ? run.m2 : run.m3;
    const size_t least = message == 1   ? kMessage1Bytes
                         : message == 2 ? kMessage2Bytes
                                        : kMessage3Bytes;
    for (size_t n = 0; n < whole.size(); ++n) {
      Run r;
      r.until_read_of(message);
      const std::string& full = message == 1 ? r.m1 : message == 2 ? r.m2 : r.m3;
      XXpsk0& reader = message == 2 ? *r.initiator : *r.responder;
      auto read = reader.read_message(std::string_view(full).substr(0, n));
      REQUIRE_FALSE(read);
      if (n < least)
        CHECK(says(read.error(), cat("the message is ", n, " bytes, too short")));
      else
        CHECK(says(read.error(), "the peer's proof does not verify"));
    }
  }
  // Longer than Noise allows.
  Run r;
  auto huge = r.responder->read_message(std::string(kMaxMessageBytes + 1, 'x'));
  REQUIRE_FALSE(huge);
  CHECK(r.responder->failed());
  CHECK_FALSE(r.initiator->write_message(std::string(kMaxMessageBytes, 'x')));
  CHECK_FALSE(r.initiator->failed());  // the caller's mistake: nothing changed
  CHECK(r.initiator->write_message(std::string(kMaxMessageBytes - kMessage1Bytes, 'x')));
}
