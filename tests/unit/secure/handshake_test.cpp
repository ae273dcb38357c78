// The handshake between two in-memory channels: identities, keys that only agree with the same
// cluster key, and refusals of garbage, plaintext, replays and tampering at every byte; in
// version 3 (Noise) and in version 2, which responders still answer. Certified identities are
// in certificate_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/strings.hpp"
#include "secure_test_support.hpp"

using namespace lattice::secure;
using namespace lattice::secure::testing;

namespace {
const uint8_t kVersions[] = {kHandshakeVersion, kOldestHandshakeVersion};
}  // namespace

TEST_CASE("a handshake with one cluster key establishes both sides and names them") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(7, version);
    Pair p(key, key);
    REQUIRE(p.handshake());
    CHECK(p.initiator.peer().role == Role::agent);
    CHECK(p.initiator.peer().name == "n1");
    CHECK(p.responder.peer().role == Role::launcher);
    CHECK(p.responder.peer().name == "launcher@test");
    // Traffic flows both ways and only decrypts on the other side.
    p.deliver_to_responder(p.initiator.seal("hello agent"));
    p.deliver_to_initiator(p.responder.seal("hello launcher"));
    CHECK(p.responder_plain == "hello agent");
    CHECK(p.initiator_plain == "hello launcher");
    CHECK(p.initiator_error.empty());
    CHECK(p.responder_error.empty());
  }
}

TEST_CASE("the handshake messages have their documented sizes and the magic comes first") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(1, version);
    Pair p(key, key);
    REQUIRE(p.handshake());
    CHECK(p.to_responder.substr(0, kHandshakeMagic.size()) == kHandshakeMagic);
    CHECK(static_cast<uint8_t>(p.to_responder[kHandshakeMagic.size()]) == version);
    CHECK(p.to_responder.size() <= 2 * kMaxHandshakeMessage);
    CHECK(p.to_initiator.size() <= kMaxHandshakeMessage);
  }
  // Version 3: M1 is the 10-byte prologue and Noise's first message (e and an empty payload's
  // tag); M2 and M3 are framed by their length.
  auto key = key_of(1);
  Pair p(key, key);
  const std::string m1 = p.initiator.start();
  CHECK(m1.size() == kHandshakeMagic.size() + 2 + 32 + 16);
}

TEST_CASE("links that share an initiator key pair each get their own traffic keys (version 2)") {
  auto key = key_of(5, kOldestHandshakeVersion);
  auto shared = EphemeralKey::generate();
  Pair a(key, key, {Role::launcher, "launcher@test"}, {Role::agent, "n1"}, shared);
  Pair b(key, key, {Role::launcher, "launcher@test"}, {Role::agent, "n2"}, shared);
  REQUIRE(a.handshake());
  REQUIRE(b.handshake());
  // Both M1s carry the shared public key, after the magic, the version and the cipher offer.
  const std::string pub(reinterpret_cast<const char*>(shared->public_key()), EphemeralKey::kBytes);
  CHECK(a.to_responder.substr(kHandshakeMagic.size() + 2, pub.size()) == pub);
  CHECK(b.to_responder.substr(kHandshakeMagic.size() + 2, pub.size()) == pub);
  // The handshakes let the pair go once started: the last holder wipes it.
  CHECK(shared.use_count() == 1);
  // Each link's records open only on that link.
  const std::string sealed = a.initiator.seal("for n1 only");
  b.deliver_to_responder(sealed);
  CHECK(b.responder_plain.empty());
  CHECK(b.responder_error.find("authentication") != std::string::npos);
  a.deliver_to_responder(sealed);
  CHECK(a.responder_plain == "for n1 only");
}

TEST_CASE("a responder makes its own key pair even when given one") {
  auto key = key_of(6);
  auto shared = EphemeralKey::generate();
  Channel responder(Channel::Side::responder, key, {Role::agent, "n1"}, shared);
  Channel initiator(Channel::Side::initiator, key, {Role::launcher, "launcher@test"});
  ChannelOutput to_initiator;
  REQUIRE(responder.receive(initiator.start(), to_initiator));
  const std::string pub(reinterpret_cast<const char*>(shared->public_key()), EphemeralKey::kBytes);
  CHECK(to_initiator.to_network.substr(0, pub.size()) != pub);
  CHECK(shared.use_count() == 1);
}

TEST_CASE("different cluster keys fail on both sides, saying so") {
  // Version 3: the responder finds out from M1 (its PSK) and says so before it hangs up.
  auto c = key_of(1), d = key_of(2);
  Pair q(c, d);
  CHECK_FALSE(q.handshake());
  CHECK(q.responder_error.find("the initiator's proof does not verify") != std::string::npos);
  CHECK(q.responder.refusal() == Refusal::key);
  CHECK(q.initiator_error.find("it says this side's cluster key is not its own") !=
        std::string::npos);
  CHECK(q.initiator.refusal() == Refusal::key);
  // Version 2: the initiator finds out from M2.
  auto a = key_of(1, kOldestHandshakeVersion), b = key_of(2, kOldestHandshakeVersion);
  Pair p(a, b);
  CHECK_FALSE(p.handshake());
  CHECK(p.initiator_error.find("does not verify") != std::string::npos);
  CHECK(p.initiator.refusal() == Refusal::key);
  CHECK(std::string(refusal_name(p.initiator.refusal())) == "key");
  CHECK_FALSE(p.responder.established());
  CHECK(p.responder.refusal() == Refusal::none);  // it heard nothing wrong: the initiator left
}

TEST_CASE("the responder refuses bytes that are not a handshake at the first wrong byte") {
  auto key = key_of(3);
  Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
  ChannelOutput out;
  // A plaintext Cap'n Proto frame starts with its segment count: 00 00 00 00.
  auto st = responder.receive(std::string("\0\0\0\0\x02\0\0\0", 8), out);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("not a Lattice handshake") != std::string::npos);
  CHECK(responder.refusal() == Refusal::not_lattice);
  CHECK(out.to_network.empty());
  // The error sticks.
  CHECK_FALSE(responder.receive("LTC", out));
}

TEST_CASE("garbage one byte at a time is refused without an answer") {
  auto key = key_of(3);
  Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
  ChannelOutput out;
  CHECK(responder.receive("L", out));
  CHECK(responder.receive("T", out));
  CHECK_FALSE(responder.receive("X", out));
  CHECK(out.to_network.empty());
}

TEST_CASE("an unknown handshake version, or an older one, is refused by name") {
  for (int version : {9, 4, 1}) {
    auto key = key_of(3);
    Channel initiator(Channel::Side::initiator, key, {Role::launcher, "l"});
    std::string m1 = initiator.start();
    m1[kHandshakeMagic.size()] = static_cast<char>(version);
    Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
    ChannelOutput out;
    // Refused at the version byte: an older peer's M1 is shorter, and it waits for an answer.
    auto st = responder.receive(m1.substr(0, kHandshakeMagic.size() + 1), out);
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find(lattice::cat(
              "version ", version, " is not supported (this is 2 to 3)")) != std::string::npos);
    CHECK(responder.refusal() == Refusal::version);
    // Its answer names its newest version, and an initiator of either version names both.
    CHECK(out.to_network == std::string(kHandshakeMagic) + '\x03');
    for (uint8_t mine : kVersions) {
      auto other_key = key_of(3, mine);
      Channel other(Channel::Side::initiator, other_key, {Role::launcher, "l"});
      other.start();
      ChannelOutput heard;
      std::string notice = std::string(kHandshakeMagic) + static_cast<char>(version);
      CHECK(other.receive(notice.substr(0, 4), heard));  // not yet known
      auto refused = other.receive(notice.substr(4), heard);
      REQUIRE_FALSE(refused);
      CHECK(refused.error().message.find(lattice::cat("the peer speaks handshake version ", version,
                                                      " and this side 2 to 3")) !=
            std::string::npos);
      CHECK(other.refusal() == Refusal::version);
    }
  }
}

TEST_CASE("the sides settle on the best record cipher both offer, and records flow under it") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(8, version);
    const Ciphers all = local_ciphers();
    struct Case {
      Ciphers initiator, responder;
      Cipher expected;
    };
    std::vector<Case> cases = {{only(Cipher::xchacha20poly1305), all, Cipher::xchacha20poly1305},
                               {all, only(Cipher::xchacha20poly1305), Cipher::xchacha20poly1305}};
    if (all & only(Cipher::aes256gcm)) {
      cases.push_back({all, all, Cipher::aes256gcm});
      // An offer with bits this side does not know (a later cipher) still settles.
      cases.push_back({static_cast<Ciphers>(all | 0x80), all, Cipher::aes256gcm});
    } else {
      cases.push_back({all, all, Cipher::xchacha20poly1305});
    }
    for (const auto& c : cases) {
      CAPTURE(int{c.initiator});
      CAPTURE(int{c.responder});
      Pair p(key, key, {Role::launcher, "launcher@test"}, {Role::agent, "n1"}, {}, c.initiator,
             c.responder);
      REQUIRE(p.handshake());
      CHECK(p.initiator.cipher() == c.expected);
      CHECK(p.responder.cipher() == c.expected);
      p.deliver_to_responder(p.initiator.seal("up"));
      p.deliver_to_initiator(p.responder.seal("down"));
      CHECK(p.responder_plain == "up");
      CHECK(p.initiator_plain == "down");
    }
  }
}

TEST_CASE("offers with no cipher in common are refused by name, on either side") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto both = key_of(8, version);
    Pair p(both, both, {Role::launcher, "launcher@test"}, {Role::agent, "n1"}, {},
           only(Cipher::aes256gcm), only(Cipher::xchacha20poly1305));
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error.find("offers record ciphers 0x02 and this side 0x01: none in common") !=
          std::string::npos);
    CHECK(p.responder.refusal() == Refusal::ciphers);
  }
  // Version 2: the initiator finds out from M2 when the responder offers what M1 did not (in 3
  // the offer is sealed in M2, so a change fails its proof).
  auto key = key_of(8, kOldestHandshakeVersion);
  Channel initiator(Channel::Side::initiator, key, {Role::launcher, "l"}, {},
                    only(Cipher::xchacha20poly1305));
  Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
  ChannelOutput r;
  REQUIRE(responder.receive(initiator.start(), r));
  std::string m2 = r.to_network;
  m2[64] = static_cast<char>(only(Cipher::aes256gcm));
  ChannelOutput i;
  auto st = initiator.receive(m2, i);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("none in common") != std::string::npos);
}

TEST_CASE("a recorded initiator replayed to a new responder is refused at M3") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(4, version);
    Pair original(key, key);
    REQUIRE(original.handshake());
    std::string recorded = original.to_responder;  // M1 then M3, as a wire tap saw them

    Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
    ChannelOutput out;
    auto st = responder.receive(recorded, out);
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("replayed") != std::string::npos);
    CHECK_FALSE(responder.established());
  }
}

TEST_CASE("flipping any byte of the handshake makes it fail") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(5, version);
    Pair clean(key, key);
    REQUIRE(clean.handshake());
    const size_t m1 = clean.initiator_sent_first;
    // Initiator -> responder bytes: M1 then M3; flip each byte of M3 (M1's offer, key and nonce
    // feed the transcript, so flipping them fails too: a changed offer cannot downgrade).
    for (size_t i = 0; i < clean.to_responder.size(); ++i) {
      Pair p(key, key);
      std::string m = p.initiator.start();
      if (i < m.size()) {
        m[i] ^= 0x01;
        p.deliver_to_responder(m);
      } else {
        p.to_responder += m;
        // Let the responder answer, then tamper with M3 on its way.
        ChannelOutput r;
        REQUIRE(p.responder.receive(m, r));
        ChannelOutput i_out;
        REQUIRE(p.initiator.receive(r.to_network, i_out));
        std::string m3 = i_out.to_network;
        m3[i - m1] ^= 0x01;
        ChannelOutput r2;
        auto st = p.responder.receive(m3, r2);
        CHECK_FALSE(p.responder.established());
        // Version 3 frames M3 with its length: a length made larger only leaves the responder
        // waiting (its deadline ends that).
        if (st) CHECK((version == kHandshakeVersion && i - m1 < 2));
        continue;
      }
      CHECK_FALSE((p.initiator.established() && p.responder.established()));
    }
    // Responder -> initiator bytes (M2: key, nonce, offer, sealed identity): every flip is
    // caught by the initiator.
    for (size_t i = 0; i < clean.to_initiator.size(); ++i) {
      Pair p(key, key);
      std::string m1_bytes = p.initiator.start();
      ChannelOutput r;
      REQUIRE(p.responder.receive(m1_bytes, r));
      std::string m2 = r.to_network;
      m2[i] ^= 0x01;
      ChannelOutput out;
      auto st = p.initiator.receive(m2, out);
      CHECK_FALSE(p.initiator.established());
      // A length made larger only leaves the initiator waiting (its deadline ends that); every
      // other flip fails at once.
      if (st) CHECK((version == kHandshakeVersion ? i < 2 : (i == 65 || i == 66)));
    }
  }
}

TEST_CASE("handshake bytes delivered one at a time still complete") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(6, version);
    Channel initiator(Channel::Side::initiator, key, {Role::agent, "n2"});
    Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
    std::string m1 = initiator.start();
    ChannelOutput r;
    for (char c : m1) REQUIRE(responder.receive(std::string(1, c), r));
    ChannelOutput i;
    for (char c : r.to_network) REQUIRE(initiator.receive(std::string(1, c), i));
    REQUIRE(initiator.established());
    // M3 and the first record in one write, then byte by byte.
    std::string wire = i.to_network + initiator.seal("after the handshake");
    ChannelOutput r2;
    for (char c : wire) REQUIRE(responder.receive(std::string(1, c), r2));
    CHECK(responder.established());
    CHECK(responder.peer().name == "n2");
    CHECK(r2.plaintext == "after the handshake");
  }
}

TEST_CASE("an M3 that claims more than the limit is refused without waiting") {
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(6, version);
    Channel initiator(Channel::Side::initiator, key, {Role::launcher, "l"});
    Channel responder(Channel::Side::responder, key, {Role::agent, "n1"});
    ChannelOutput r;
    REQUIRE(responder.receive(initiator.start(), r));
    auto st = responder.receive(std::string("\xff\xff", 2), r);
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find(version == kHandshakeVersion
                                      ? "a handshake message of 65535 bytes"
                                      : "sealed identity of 65535 bytes") != std::string::npos);
    CHECK(responder.refusal() == Refusal::malformed);
  }
}

TEST_CASE("identities: encode/decode and names that are refused") {
  Identity id{Role::agent, "node-17.cluster"};
  auto back = decode_identity(encode_identity(id));
  REQUIRE(back);
  CHECK(back->name == id.name);
  CHECK(back->role == Role::agent);
  CHECK_FALSE(valid_identity_name(""));
  CHECK_FALSE(valid_identity_name("has space"));
  CHECK_FALSE(valid_identity_name(std::string(256, 'a')));
  CHECK_FALSE(decode_identity(std::string("\x03\x01x", 3)));  // unknown role
  CHECK_FALSE(decode_identity(std::string("\x02\x05x", 3)));  // length lies
  CHECK(describe(id) == "agent node-17.cluster");
}

TEST_CASE("the user role is never taken from a handshake, only given by the owner") {
  const Identity user{Role::user, "1001"};
  CHECK(describe(user) == "user 1001");
  CHECK(role_name(Role::user) == "user");
  // Well-formed in every other way, it is refused for its role alone.
  CHECK_FALSE(decode_identity(encode_identity(user)));
  const auto claimed = [](char role) { return std::string{role, 4} + "1001"; };
  CHECK_FALSE(decode_identity(claimed(3)));
  CHECK(decode_identity(claimed(2)));
  CHECK(decode_identity(claimed(1)));
  CHECK_FALSE(decode_identity(claimed(0)));
  CHECK_FALSE(decode_identity(claimed(4)));

  // An initiator that claims it, holding the cluster key, does not get through.
  for (uint8_t version : kVersions) {
    CAPTURE(int{version});
    auto key = key_of(8, version);
    Pair p(key, key, user);
    CHECK_FALSE(p.handshake());
    CHECK_FALSE(p.responder.established());
    CHECK(p.responder_error.find("the peer's identity is malformed") != std::string::npos);
    // And a responder that claims it is refused by the initiator.
    Pair q(key, key, {Role::launcher, "l"}, user);
    CHECK_FALSE(q.handshake());
    CHECK_FALSE(q.initiator.established());
    CHECK(q.initiator_error.find("the peer's identity is malformed") != std::string::npos);
  }
}
