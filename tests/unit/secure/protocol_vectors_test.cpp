// docs/protocol.md's vectors (read from the document at run time) against the real handshake and
// records, and every step the document describes recomputed from its inputs and labels with
// libsodium's own primitives: a change to the code, to a vector or to the description of a
// step fails here.
#include "protocol_vectors.hpp"

#include <doctest/doctest.h>
#include <sodium.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "base/strings.hpp"
#include "secure/handshake.hpp"
#include "secure/record.hpp"
#include "secure_test_support.hpp"

using namespace lattice;
using namespace lattice::secure;
using lattice::testing::ProtocolVectors;

namespace {

const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
std::string bytes_of(const uint8_t* p, size_t n) {
  return std::string(reinterpret_cast<const char*>(p), n);
}
std::string bytes_of(const Secret& s) { return bytes_of(s.data(), s.size()); }
// Compared as hex, so that a failure shows both values in a form the document can take.
std::string hex(std::string_view s) { return to_hex(s); }

Secret secret_of(const std::string& bytes) {
  Secret s(bytes.size());
  std::memcpy(s.data(), bytes.data(), bytes.size());
  return s;
}

// BLAKE2b of `parts` in order, `out_bytes` long, keyed when `key` is not empty.
std::string blake2b(size_t out_bytes, const std::string& key,
                    std::initializer_list<std::string> parts) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, key.empty() ? nullptr : u8(key), key.size(), out_bytes);
  for (const auto& part : parts) crypto_generichash_update(&st, u8(part), part.size());
  std::string out(out_bytes, '\0');
  crypto_generichash_final(&st, reinterpret_cast<uint8_t*>(out.data()), out_bytes);
  return out;
}

std::string be16(size_t n) { return {static_cast<char>(n >> 8), static_cast<char>(n & 0xff)}; }

// A sealed identity message: u16 length | XChaCha20-Poly1305(key, 24 zero bytes of nonce, ad).
std::string sealed_identity(const std::string& key, const std::string& ad,
                            const std::string& identity) {
  std::string sealed(identity.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  const uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = {};
  crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<uint8_t*>(sealed.data()), nullptr,
                                             u8(identity), identity.size(), u8(ad), ad.size(),
                                             nullptr, nonce, u8(key));
  return be16(sealed.size()) + sealed;
}

ProtocolVectors load(std::string_view tag) {
  auto vectors = ProtocolVectors::load(tag);
  REQUIRE_MESSAGE(vectors.ok(), (vectors.ok() ? "" : vectors.error().message));
  return std::move(vectors.value());
}

// Both sides of the real handshake (version 2), run on the document's inputs.
void check_real_handshake(ProtocolVectors& v) {
  Credentials key(ClusterKey::from_bytes(u8(v.bytes("cluster_key"))));
  key.initiate_version = kOldestHandshakeVersion;
  CHECK(key.cluster_key().id() == hex(v.bytes("cluster_key_id")));
  auto initiator_identity = decode_identity(v.bytes("initiator_identity"));
  auto responder_identity = decode_identity(v.bytes("responder_identity"));
  REQUIRE(initiator_identity);
  REQUIRE(responder_identity);
  CHECK(encode_identity(*initiator_identity) == v.bytes("initiator_identity"));
  Handshake initiator(Handshake::Side::initiator, key, *initiator_identity, {},
                      static_cast<Ciphers>(v.bytes("initiator_ciphers").at(0)));
  Handshake responder(Handshake::Side::responder, key, *responder_identity, {},
                      static_cast<Ciphers>(v.bytes("responder_ciphers").at(0)));
  initiator.fix_randomness_for_test_vectors(u8(v.bytes("initiator_ephemeral_secret")),
                                            u8(v.bytes("initiator_nonce")));
  responder.fix_randomness_for_test_vectors(u8(v.bytes("responder_ephemeral_secret")),
                                            u8(v.bytes("responder_nonce")));

  const std::string m1 = initiator.start();
  CHECK(hex(m1) == hex(v.bytes("m1")));
  std::string m2, m3, after_m3;
  std::string_view in = m1;
  auto step = responder.receive(in, m2);
  REQUIRE(step);
  CHECK_FALSE(*step);
  CHECK(hex(m2) == hex(v.bytes("m2")));
  in = m2;
  step = initiator.receive(in, m3);
  REQUIRE(step);
  CHECK(*step);
  CHECK(hex(m3) == hex(v.bytes("m3")));
  in = m3;
  step = responder.receive(in, after_m3);
  REQUIRE(step);
  CHECK(*step);
  CHECK(after_m3.empty());

  const HandshakeResult i = initiator.take_result();
  const HandshakeResult r = responder.take_result();
  CHECK(encode_identity(i.peer) == v.bytes("responder_identity"));
  CHECK(encode_identity(r.peer) == v.bytes("initiator_identity"));
  const std::string& i_to_r = v.bytes("traffic_key_i_to_r");
  const std::string& r_to_i = v.bytes("traffic_key_r_to_i");
  CHECK(hex(bytes_of(i.send_key)) == hex(i_to_r));
  CHECK(hex(bytes_of(r.receive_key)) == hex(i_to_r));
  CHECK(hex(bytes_of(r.send_key)) == hex(r_to_i));
  CHECK(hex(bytes_of(i.receive_key)) == hex(r_to_i));
  const auto chosen = static_cast<Cipher>(v.bytes("chosen_cipher").at(0));
  CHECK(i.cipher == chosen);
  CHECK(r.cipher == chosen);
}

// The handshake as the document tells it, from its inputs and labels, step by step.
void check_documented_steps(ProtocolVectors& v) {
  const std::string& key = v.bytes("cluster_key");
  CHECK(hex(blake2b(8, key, {v.bytes("label_key_id")})) == hex(v.bytes("cluster_key_id")));
  const std::string& i_secret = v.bytes("initiator_ephemeral_secret");
  const std::string& r_secret = v.bytes("responder_ephemeral_secret");
  uint8_t public_key[crypto_scalarmult_BYTES];
  crypto_scalarmult_base(public_key, u8(i_secret));
  const std::string e_i = bytes_of(public_key, sizeof public_key);
  crypto_scalarmult_base(public_key, u8(r_secret));
  const std::string e_r = bytes_of(public_key, sizeof public_key);
  CHECK(hex(e_i) == hex(v.bytes("initiator_ephemeral_public")));
  CHECK(hex(e_r) == hex(v.bytes("responder_ephemeral_public")));

  // crypto_kx: BLAKE2b-512(X25519(secret, peer's public) | e_I | e_R), the first half R->I.
  uint8_t shared[crypto_scalarmult_BYTES];
  REQUIRE(crypto_scalarmult(shared, u8(i_secret), u8(e_r)) == 0);
  const std::string kx = blake2b(64, "", {bytes_of(shared, sizeof shared), e_i, e_r});
  const std::string kx_r_to_i = kx.substr(0, 32), kx_i_to_r = kx.substr(32);
  CHECK(hex(kx_i_to_r) == hex(v.bytes("kx_i_to_r")));
  CHECK(hex(kx_r_to_i) == hex(v.bytes("kx_r_to_i")));

  const std::string m1 = v.bytes("magic") + v.bytes("handshake_version") +
                         v.bytes("initiator_ciphers") + e_i + v.bytes("initiator_nonce");
  CHECK(hex(m1) == hex(v.bytes("m1")));
  const std::string m2_clear = e_r + v.bytes("responder_nonce") + v.bytes("responder_ciphers");
  std::string transcript = v.bytes("label_transcript") + m1 + m2_clear;
  const std::string h1 = blake2b(32, "", {transcript});
  CHECK(hex(h1) == hex(v.bytes("transcript_hash_1")));
  const std::string k_m2 = blake2b(32, key, {v.bytes("label_handshake_r_to_i"), kx_r_to_i, h1});
  CHECK(hex(k_m2) == hex(v.bytes("handshake_key_m2")));
  const std::string m2_sealed = sealed_identity(k_m2, h1, v.bytes("responder_identity"));
  CHECK(hex(m2_clear + m2_sealed) == hex(v.bytes("m2")));

  transcript += m2_sealed;
  const std::string h2 = blake2b(32, "", {transcript});
  CHECK(hex(h2) == hex(v.bytes("transcript_hash_2")));
  const std::string k_m3 = blake2b(32, key, {v.bytes("label_handshake_i_to_r"), kx_i_to_r, h2});
  CHECK(hex(k_m3) == hex(v.bytes("handshake_key_m3")));
  const std::string m3 = sealed_identity(k_m3, h2, v.bytes("initiator_identity"));
  CHECK(hex(m3) == hex(v.bytes("m3")));

  transcript += m3;
  const std::string h3 = blake2b(32, "", {transcript});
  CHECK(hex(h3) == hex(v.bytes("transcript_hash_3")));
  CHECK(hex(blake2b(32, key, {v.bytes("label_traffic_i_to_r"), kx_i_to_r, h3})) ==
        hex(v.bytes("traffic_key_i_to_r")));
  CHECK(hex(blake2b(32, key, {v.bytes("label_traffic_r_to_i"), kx_r_to_i, h3})) ==
        hex(v.bytes("traffic_key_r_to_i")));
  // AES-256-GCM is taken when both offer it (0x02), else XChaCha20-Poly1305 (0x01).
  const auto common =
      static_cast<uint8_t>(v.bytes("initiator_ciphers").at(0) & v.bytes("responder_ciphers").at(0));
  CHECK(v.bytes("chosen_cipher") == std::string(1, (common & 2) ? '\x02' : '\x01'));
}

void check_gcm_records(ProtocolVectors& v) {
  const std::string& i_to_r = v.bytes("traffic_key_i_to_r");
  const std::string& r_to_i = v.bytes("traffic_key_r_to_i");
  const std::string& hello_agent = v.bytes("record_plaintext_i_to_r");
  const std::string& hello_launcher = v.bytes("record_plaintext_r_to_i");
  const std::string& i_record_0 = v.bytes("gcm_i_to_r_record_0");
  const std::string& i_record_1 = v.bytes("gcm_i_to_r_record_1_final");
  const std::string& r_record_0 = v.bytes("gcm_r_to_i_record_0");
  if (!crypto_aead_aes256gcm_is_available()) {
    MESSAGE("no AES-NI here: the AES-256-GCM vectors are not checked");
    return;
  }
  std::string sealed;
  RecordWriter initiator(secret_of(i_to_r), Cipher::aes256gcm);
  initiator.seal(hello_agent, sealed);
  CHECK(hex(sealed) == hex(i_record_0));
  sealed.clear();
  initiator.seal_final(sealed);
  CHECK(hex(sealed) == hex(i_record_1));
  sealed.clear();
  RecordWriter responder(secret_of(r_to_i), Cipher::aes256gcm);
  responder.seal(hello_launcher, sealed);
  CHECK(hex(sealed) == hex(r_record_0));

  CHECK(hex(secure::testing::gcm_record(i_to_r, 0, 0x00, hello_agent)) == hex(i_record_0));
  CHECK(hex(secure::testing::gcm_record(i_to_r, 1, 0x01, "")) == hex(i_record_1));
  CHECK(hex(secure::testing::gcm_record(r_to_i, 0, 0x00, hello_launcher)) == hex(r_record_0));

  RecordReader reader(secret_of(i_to_r), Cipher::aes256gcm);
  std::string opened;
  REQUIRE(reader.read(i_record_0 + i_record_1, opened));
  CHECK(opened == hello_agent);
  CHECK(reader.finished());
}

// Sealing picks a random stream header, so the vector is checked where it is opened.
void check_xchacha_records(ProtocolVectors& v) {
  const std::string& key = v.bytes("traffic_key_i_to_r");
  const std::string& header = v.bytes("xchacha_i_to_r_header");
  const std::string& record_0 = v.bytes("xchacha_i_to_r_record_0");
  const std::string& record_1 = v.bytes("xchacha_i_to_r_record_1_final");
  const std::string& plain = v.bytes("record_plaintext_i_to_r");

  RecordReader reader(secret_of(key), Cipher::xchacha20poly1305);
  std::string opened;
  REQUIRE(reader.read(header + record_0 + record_1, opened));
  CHECK(opened == plain);
  CHECK(reader.finished());

  // libsodium's secretstream on each record's body, its 4 length bytes the additional data.
  crypto_secretstream_xchacha20poly1305_state st;
  REQUIRE(crypto_secretstream_xchacha20poly1305_init_pull(&st, u8(header), u8(key)) == 0);
  for (const std::string* record : {&record_0, &record_1}) {
    std::string out(record->size() - 4 - crypto_secretstream_xchacha20poly1305_ABYTES, '\0');
    uint8_t tag = 0xff;
    REQUIRE(crypto_secretstream_xchacha20poly1305_pull(&st, reinterpret_cast<uint8_t*>(out.data()),
                                                       nullptr, &tag, u8(*record) + 4,
                                                       record->size() - 4, u8(*record), 4) == 0);
    const bool last = record == &record_1;
    CHECK(out == (last ? std::string() : plain));
    CHECK(tag == (last ? crypto_secretstream_xchacha20poly1305_TAG_FINAL
                       : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE));
  }
}

}  // namespace

TEST_CASE("docs/protocol.md: its handshake and record vectors are what the code makes") {
  auto v = load("secure");
  check_real_handshake(v);
  check_documented_steps(v);
  check_gcm_records(v);
  check_xchacha_records(v);
  CHECK(join(v.unused(), ", ") == "");
}
