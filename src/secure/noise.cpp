// Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b, written from the Noise spec (revision 34): the
// symmetric state is h (public, in the object) and ck, k, n (ck and k in the guarded block).
// HASH = BLAKE2b-512, HMAC with BLOCKLEN 128, HKDF as section 4.3 (no info, one-byte counters),
// ENCRYPT = IETF ChaCha20-Poly1305 with nonce = 4 zero bytes | n as 64-bit little-endian.
#include "secure/noise.hpp"

#include <sodium.h>

#include <cstring>
#include <initializer_list>

#include "base/strings.hpp"

namespace lattice::secure::noise {
namespace {

constexpr size_t kBlockBytes = 128;  // BLAKE2b's block, HMAC's pad length
static_assert(kProtocolName.size() <= kHashBytes, "the name is padded, not hashed, into h");
static_assert(crypto_scalarmult_BYTES == kKeyBytes && crypto_scalarmult_SCALARBYTES == kKeyBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == kTagBytes);
static_assert(crypto_aead_chacha20poly1305_ietf_KEYBYTES == kKeyBytes);

struct Part {
  const uint8_t* data;
  size_t size;
};

const uint8_t* u8(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// HMAC-BLAKE2b over the concatenated parts; `key` is always HASHLEN bytes here (ck or a PRK).
void hmac(uint8_t out[kHashBytes], const uint8_t key[kHashBytes], std::initializer_list<Part> in) {
  uint8_t pad[kBlockBytes];
  uint8_t inner[kHashBytes];
  crypto_generichash_state st;
  std::memset(pad, 0x36, sizeof pad);
  for (size_t i = 0; i < kHashBytes; ++i) pad[i] ^= key[i];
  crypto_generichash_init(&st, nullptr, 0, kHashBytes);
  crypto_generichash_update(&st, pad, sizeof pad);
  for (const Part& part : in) crypto_generichash_update(&st, part.data, part.size);
  crypto_generichash_final(&st, inner, sizeof inner);
  std::memset(pad, 0x5c, sizeof pad);
  for (size_t i = 0; i < kHashBytes; ++i) pad[i] ^= key[i];
  crypto_generichash_init(&st, nullptr, 0, kHashBytes);
  crypto_generichash_update(&st, pad, sizeof pad);
  crypto_generichash_update(&st, inner, sizeof inner);
  crypto_generichash_final(&st, out, kHashBytes);
  sodium_memzero(pad, sizeof pad);
  sodium_memzero(inner, sizeof inner);
  sodium_memzero(&st, sizeof st);
}

// HKDF(ck, ikm) with two or three outputs (out3 may be null).
void hkdf(const uint8_t ck[kHashBytes], Part ikm, uint8_t out1[kHashBytes],
          uint8_t out2[kHashBytes], uint8_t out3[kHashBytes]) {
  uint8_t prk[kHashBytes];
  const uint8_t one = 1, two = 2, three = 3;
  hmac(prk, ck, {ikm});
  hmac(out1, prk, {{&one, 1}});
  hmac(out2, prk, {{out1, kHashBytes}, {&two, 1}});
  if (out3) hmac(out3, prk, {{out2, kHashBytes}, {&three, 1}});
  sodium_memzero(prk, sizeof prk);
}

void nonce_of(uint64_t n, uint8_t out[crypto_aead_chacha20poly1305_ietf_NPUBBYTES]) {
  std::memset(out, 0, crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
  for (int i = 0; i < 8; ++i) out[4 + i] = static_cast<uint8_t>(n >> (8 * i));
}

Error too_short(size_t size, int message, size_t least) {
  return make_error(cat("handshake failed: the message is ", size, " bytes, too short (message ",
                        message, " of ", kProtocolName, " has at least ", least, ")"));
}

const char* const kNoProof =
    "handshake failed: the peer's proof does not verify (it holds another pre-shared key, or the "
    "handshake was tampered with)";
const char* const kUnusableKey =
    "handshake failed: unusable key (the peer's key is a low-order point)";

}  // namespace

// Every secret of the handshake, in one guarded block.
struct XXpsk0::Keys {
  uint8_t s[kKeyBytes];    // static secret
  uint8_t e[kKeyBytes];    // ephemeral secret
  uint8_t ck[kHashBytes];  // chaining key
  uint8_t k[kKeyBytes];    // cipher key
  uint8_t psk[kKeyBytes];
  // The responder's DH(e, re), made (and checked) when message 1 is read, mixed in by message
  // 2's `ee`: a low-order key is refused by the read that carried it.
  uint8_t ee[kKeyBytes];
};

std::array<uint8_t, kKeyBytes> public_key_of(const uint8_t secret[kKeyBytes]) {
  std::array<uint8_t, kKeyBytes> out{};
  initialize();
  (void)crypto_scalarmult_base(out.data(), secret);  // never the identity for a clamped scalar
  return out;
}

XXpsk0::XXpsk0(Role role, std::string_view prologue, const uint8_t psk[kKeyBytes],
               const uint8_t static_secret[kKeyBytes], const uint8_t* static_public)
    : role_(role), secret_(sizeof(Keys)) {
  std::memcpy(keys().psk, psk, kKeyBytes);
  std::memcpy(keys().s, static_secret, kKeyBytes);
  if (static_public)
    std::memcpy(static_public_.data(), static_public, kKeyBytes);
  else
    static_public_ = public_key_of(keys().s);
  randombytes_buf(keys().e, kKeyBytes);
  ephemeral_public_ = public_key_of(keys().e);
  // InitializeSymmetric: the name fits in HASHLEN, so h is the name padded with zeros; ck = h.
  std::memcpy(h_.data(), kProtocolName.data(), kProtocolName.size());
  std::memcpy(keys().ck, h_.data(), kHashBytes);
  mix_hash(u8(prologue), prologue.size());
}

XXpsk0::~XXpsk0() = default;  // the Secret wipes itself

XXpsk0::Keys& XXpsk0::keys() { return *reinterpret_cast<Keys*>(secret_.data()); }

void XXpsk0::fix_ephemeral_for_test_vectors(const uint8_t secret[kKeyBytes]) {
  if (step_ != 0 || failed_) return;
  std::memcpy(keys().e, secret, kKeyBytes);
  ephemeral_public_ = public_key_of(keys().e);
}

// The initiator writes messages 1 and 3 (steps 0 and 2), the responder message 2.
bool XXpsk0::my_turn_to_write() const { return (step_ % 2 == 0) == (role_ == Role::initiator); }

Error XXpsk0::fail(Error error) {
  failed_ = true;
  has_key_ = false;
  secret_.wipe();
  return error;
}

void XXpsk0::mix_hash(const uint8_t* data, size_t size) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, kHashBytes);
  crypto_generichash_update(&st, h_.data(), h_.size());
  crypto_generichash_update(&st, data, size);
  crypto_generichash_final(&st, h_.data(), h_.size());
}

void XXpsk0::mix_key(const uint8_t* input, size_t size) {
  uint8_t ck[kHashBytes], k[kHashBytes];
  hkdf(keys().ck, {input, size}, ck, k, nullptr);
  std::memcpy(keys().ck, ck, kHashBytes);
  std::memcpy(keys().k, k, kKeyBytes);  // HASHLEN 64: k is the first 32 bytes
  nonce_ = 0;
  has_key_ = true;
  sodium_memzero(ck, sizeof ck);
  sodium_memzero(k, sizeof k);
}

void XXpsk0::mix_key_and_hash(const uint8_t* input, size_t size) {
  uint8_t ck[kHashBytes], h[kHashBytes], k[kHashBytes];
  hkdf(keys().ck, {input, size}, ck, h, k);
  std::memcpy(keys().ck, ck, kHashBytes);
  mix_hash(h, kHashBytes);
  std::memcpy(keys().k, k, kKeyBytes);
  nonce_ = 0;
  has_key_ = true;
  sodium_memzero(ck, sizeof ck);
  sodium_memzero(h, sizeof h);
  sodium_memzero(k, sizeof k);
}

Status XXpsk0::mix_dh(const uint8_t* local_secret, const uint8_t* remote_public) {
  uint8_t dh[kKeyBytes];
  // crypto_scalarmult refuses (-1) an all-zero result: the peer sent a low-order point.
  if (crypto_scalarmult(dh, local_secret, remote_public) != 0) {
    sodium_memzero(dh, sizeof dh);
    return make_error(kUnusableKey);
  }
  mix_key(dh, sizeof dh);
  sodium_memzero(dh, sizeof dh);
  return {};
}

void XXpsk0::encrypt_and_hash(std::string_view plain, std::string& out) {
  const size_t start = out.size();
  if (!has_key_) {
    out += plain;
  } else {
    uint8_t nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    nonce_of(nonce_++, nonce);
    out.resize(start + plain.size() + kTagBytes);
    crypto_aead_chacha20poly1305_ietf_encrypt(reinterpret_cast<uint8_t*>(out.data()) + start,
                                              nullptr, u8(plain), plain.size(), h_.data(),
                                              h_.size(), nullptr, nonce, keys().k);
  }
  mix_hash(reinterpret_cast<const uint8_t*>(out.data()) + start, out.size() - start);
}

Result<std::string> XXpsk0::decrypt_and_hash(std::string_view sealed) {
  std::string plain;
  if (!has_key_) {
    plain = sealed;
  } else {
    if (sealed.size() < kTagBytes) return make_error(kNoProof);  // lengths are checked before
    uint8_t nonce[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    nonce_of(nonce_, nonce);
    plain.resize(sealed.size() - kTagBytes);
    if (crypto_aead_chacha20poly1305_ietf_decrypt(reinterpret_cast<uint8_t*>(plain.data()), nullptr,
                                                  nullptr, u8(sealed), sealed.size(), h_.data(),
                                                  h_.size(), nonce, keys().k) != 0)
      return make_error(kNoProof);
    ++nonce_;
  }
  mix_hash(u8(sealed), sealed.size());
  return plain;
}

// The `e` token; in a psk handshake it is also MixKey(e), so that what follows is encrypted
// under a key that depends on the fresh ephemeral and not on the psk alone.
void XXpsk0::write_e(std::string& out) {
  out.append(reinterpret_cast<const char*>(ephemeral_public_.data()), kKeyBytes);
  mix_hash(ephemeral_public_.data(), kKeyBytes);
  mix_key(ephemeral_public_.data(), kKeyBytes);
}

void XXpsk0::read_e(const uint8_t* remote) {
  std::memcpy(remote_ephemeral_.data(), remote, kKeyBytes);
  mix_hash(remote_ephemeral_.data(), kKeyBytes);
  mix_key(remote_ephemeral_.data(), kKeyBytes);
}

// Only ck is still needed (by split); the rest goes now.
void XXpsk0::finish() {
  Keys& k = keys();
  sodium_memzero(k.s, sizeof k.s);
  sodium_memzero(k.e, sizeof k.e);
  sodium_memzero(k.k, sizeof k.k);
  sodium_memzero(k.psk, sizeof k.psk);
  sodium_memzero(k.ee, sizeof k.ee);
  has_key_ = false;
  step_ = kDone;
}

Result<std::string> XXpsk0::write_message(std::string_view payload) {
  if (failed_) return make_error("handshake failed earlier");
  if (step_ == kDone) return make_error("the handshake is complete: no message is left to write");
  if (!my_turn_to_write()) return make_error("it is not this side's turn to write a message");
  static constexpr size_t kEmpty[] = {kMessage1Bytes, kMessage2Bytes, kMessage3Bytes};
  if (payload.size() > kMaxMessageBytes - kEmpty[step_])
    return make_error(cat("a handshake payload of ", payload.size(), " bytes is too long"));
  std::string out;
  out.reserve(kEmpty[step_] + payload.size());
  if (step_ == 0) {  // -> psk, e
    mix_key_and_hash(keys().psk, kKeyBytes);
    write_e(out);
  } else if (step_ == 1) {  // <- e, ee, s, es
    write_e(out);
    mix_key(keys().ee, kKeyBytes);
    sodium_memzero(keys().ee, kKeyBytes);
    encrypt_and_hash({reinterpret_cast<const char*>(static_public_.data()), kKeyBytes}, out);
    if (auto es = mix_dh(keys().s, remote_ephemeral_.data()); !es) return fail(es.error());
  } else {  // -> s, se
    encrypt_and_hash({reinterpret_cast<const char*>(static_public_.data()), kKeyBytes}, out);
    if (auto se = mix_dh(keys().s, remote_ephemeral_.data()); !se) return fail(se.error());
  }
  encrypt_and_hash(payload, out);
  if (++step_ == kDone) finish();
  return out;
}

Result<std::string> XXpsk0::read_message(std::string_view message) {
  if (failed_) return make_error("handshake failed earlier");
  if (step_ == kDone) return make_error("the handshake is complete: no message is left to read");
  if (my_turn_to_write()) return make_error("it is not this side's turn to read a message");
  if (message.size() > kMaxMessageBytes)
    return fail(make_error(cat("handshake failed: the message is ", message.size(),
                               " bytes, more than Noise allows (", kMaxMessageBytes, ")")));
  const auto* bytes = u8(message);
  std::array<uint8_t, kKeyBytes> peer_static{};
  if (step_ == 0) {  // -> psk, e
    if (message.size() < kMessage1Bytes) return fail(too_short(message.size(), 1, kMessage1Bytes));
    mix_key_and_hash(keys().psk, kKeyBytes);
    read_e(bytes);
    message.remove_prefix(kKeyBytes);
  } else if (step_ == 1) {  // <- e, ee, s, es
    if (message.size() < kMessage2Bytes) return fail(too_short(message.size(), 2, kMessage2Bytes));
    read_e(bytes);
    if (auto ee = mix_dh(keys().e, remote_ephemeral_.data()); !ee) return fail(ee.error());
    auto s = decrypt_and_hash(message.substr(kKeyBytes, kKeyBytes + kTagBytes));
    if (!s) return fail(s.error());
    std::memcpy(peer_static.data(), s->data(), kKeyBytes);
    if (auto es = mix_dh(keys().e, peer_static.data()); !es) return fail(es.error());
    message.remove_prefix(kKeyBytes + kKeyBytes + kTagBytes);
  } else {  // -> s, se
    if (message.size() < kMessage3Bytes) return fail(too_short(message.size(), 3, kMessage3Bytes));
    auto s = decrypt_and_hash(message.substr(0, kKeyBytes + kTagBytes));
    if (!s) return fail(s.error());
    std::memcpy(peer_static.data(), s->data(), kKeyBytes);
    if (auto se = mix_dh(keys().e, peer_static.data()); !se) return fail(se.error());
    message.remove_prefix(kKeyBytes + kTagBytes);
  }
  auto payload = decrypt_and_hash(message);
  if (!payload) return fail(payload.error());
  if (step_ == 0) {
    // Authenticated (the payload's tag needs the psk) before the DH work: then ee is made and
    // checked now, so a low-order key fails this read rather than the responder's write.
    if (crypto_scalarmult(keys().ee, keys().e, remote_ephemeral_.data()) != 0)
      return fail(make_error(kUnusableKey));
  } else {
    remote_static_ = peer_static;  // the payload's tag proves the peer holds its secret
  }
  if (++step_ == kDone) finish();
  return payload;
}

Status XXpsk0::split(uint8_t initiator_to_responder[kKeyBytes],
                     uint8_t responder_to_initiator[kKeyBytes]) {
  sodium_memzero(initiator_to_responder, kKeyBytes);
  sodium_memzero(responder_to_initiator, kKeyBytes);
  if (failed_) return make_error("handshake failed earlier");
  if (step_ != kDone) return make_error("the handshake is not complete: no keys to split");
  if (split_done_) return make_error("the handshake's keys were split already");
  uint8_t k1[kHashBytes], k2[kHashBytes];
  hkdf(keys().ck, {nullptr, 0}, k1, k2, nullptr);
  std::memcpy(initiator_to_responder, k1, kKeyBytes);
  std::memcpy(responder_to_initiator, k2, kKeyBytes);
  sodium_memzero(k1, sizeof k1);
  sodium_memzero(k2, sizeof k2);
  secret_.wipe();
  split_done_ = true;
  return {};
}

}  // namespace lattice::secure::noise
