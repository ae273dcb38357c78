// Handshake internals. Transcript: every byte both sides have seen, prefixed with a label;
// each key is a keyed BLAKE2b (key = cluster key) over a direction label, the crypto_kx session
// key of that direction and the transcript hash at that point. AEAD nonces are zero because
// every handshake key is used exactly once.
#include "secure/handshake.hpp"

#include <sodium.h>

#include <array>
#include <cstring>
#include <optional>

#include "base/strings.hpp"
#include "secure/handshake_bytes.hpp"
#include "secure/handshake_v3.hpp"

namespace lattice::secure {
namespace {

using handshake_bytes::append_be16;
using handshake_bytes::read_be16;

constexpr size_t kPublicKey = crypto_kx_PUBLICKEYBYTES;
constexpr size_t kNonce = 32;
constexpr size_t kHash = 32;
constexpr size_t kKey = 32;
constexpr size_t kTag = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kM1 = kHandshakeMagic.size() + 2 + kPublicKey + kNonce;  // version, ciphers
constexpr size_t kM2Clear = kPublicKey + kNonce + 1;  // before the sealed identity: + ciphers
constexpr size_t kMinSealedIdentity = 3 + kTag;       // role, length, one name byte
constexpr size_t kMaxSealedIdentity = 2 + kMaxIdentityName + kTag;
static_assert(kM2Clear + 2 + kMaxSealedIdentity <= kMaxHandshakeMessage);

constexpr char kLabel[] = "lattice sealed link v1";
constexpr char kHandshakeRI[] = "handshake responder->initiator";
constexpr char kHandshakeIR[] = "handshake initiator->responder";
constexpr char kTrafficRI[] = "traffic responder->initiator";
constexpr char kTrafficIR[] = "traffic initiator->responder";

const char* const kPeerLacksKey =
    "handshake failed: the peer's proof does not verify (it holds another cluster key, or the "
    "handshake was tampered with)";
const char* const kInitiatorLacksKey =
    "handshake failed: the initiator's proof does not verify (another cluster key, or a replayed "
    "or tampered handshake)";

const uint8_t* bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string hex_byte(uint8_t b) { return to_hex(std::string_view(reinterpret_cast<char*>(&b), 1)); }

}  // namespace

// Key material lives in one guarded block per handshake.
struct Keys {
  uint8_t ephemeral_secret[crypto_kx_SECRETKEYBYTES];
  uint8_t rx[kKey];  // crypto_kx session key, peer -> us
  uint8_t tx[kKey];  // us -> peer
  uint8_t aead[kKey];
};

struct Handshake::State {
  enum class Step { start, await_m1, await_m2, await_m3, done, failed };

  State(Side s, const Credentials& cr, Identity me, std::shared_ptr<const EphemeralKey> e,
        Ciphers c)
      : side(s), credentials(cr), self(std::move(me)), shared(std::move(e)), ciphers(c) {}

  Side side;
  const Credentials& credentials;
  Identity self;
  std::shared_ptr<const EphemeralKey> shared;  // the initiator's key pair, when given one
  Ciphers ciphers;                             // this side's offer
  Step step = Step::start;
  Refusal refusal = Refusal::none;
  Secret secret{sizeof(Keys)};
  uint8_t ephemeral_public[kPublicKey] = {};
  std::string transcript = kLabel;
  std::string pending;  // the handshake message being gathered
  HandshakeResult result;
  // Set by a test vector (fix_randomness_for_test_vectors): the key pair is in place already.
  std::optional<std::array<uint8_t, kNonce>> fixed_nonce;
  // Version 3, once chosen: it runs the rest of the handshake.
  std::unique_ptr<HandshakeV3> v3;

  Keys& keys() { return *reinterpret_cast<Keys*>(secret.data()); }

  void make_ephemeral() {
    if (!fixed_nonce) crypto_kx_keypair(ephemeral_public, keys().ephemeral_secret);
  }

  void make_nonce(uint8_t out[kNonce]) const {
    if (fixed_nonce)
      std::memcpy(out, fixed_nonce->data(), kNonce);
    else
      randombytes_buf(out, kNonce);
  }

  void hash(uint8_t out[kHash]) const {
    crypto_generichash(out, kHash, bytes(transcript), transcript.size(), nullptr, 0);
  }

  // out = BLAKE2b(key = cluster key; label | direction key | transcript hash)
  void derive(uint8_t* out, const char* label, const uint8_t direction_key[kKey]) const {
    uint8_t h[kHash];
    hash(h);
    crypto_generichash_state st;
    crypto_generichash_init(&st, credentials.cluster_key().data(), kClusterKeyBytes, kKey);
    crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>(label), std::strlen(label));
    crypto_generichash_update(&st, direction_key, kKey);
    crypto_generichash_update(&st, h, kHash);
    crypto_generichash_final(&st, out, kKey);
    sodium_memzero(&st, sizeof st);
  }

  // AEAD of this side's identity under a one-time key; appended to out with its length.
  void seal_identity(std::string& out, const char* label, const uint8_t direction_key[kKey]) {
    derive(keys().aead, label, direction_key);
    uint8_t h[kHash];
    hash(h);
    std::string plain = encode_identity(self);
    std::string sealed(plain.size() + kTag, '\0');
    unsigned long long sealed_len = 0;
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = {};
    crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<uint8_t*>(sealed.data()),
                                               &sealed_len, bytes(plain), plain.size(), h, kHash,
                                               nullptr, nonce, keys().aead);
    sealed.resize(static_cast<size_t>(sealed_len));
    std::string message;
    append_be16(message, sealed.size());
    message += sealed;
    transcript += message;
    out += message;
  }

  // Opens the peer's sealed identity (`sealed` excludes the length prefix).
  Result<Identity> open_identity(std::string_view framed, const char* label,
                                 const uint8_t direction_key[kKey], const char* failure) {
    derive(keys().aead, label, direction_key);
    uint8_t h[kHash];
    hash(h);
    std::string_view sealed = framed.substr(2);
    std::string plain(sealed.size() - kTag, '\0');
    unsigned long long plain_len = 0;
    uint8_t nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = {};
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(
            reinterpret_cast<uint8_t*>(plain.data()), &plain_len, nullptr,
            reinterpret_cast<const uint8_t*>(sealed.data()), sealed.size(), h, kHash, nonce,
            keys().aead) != 0) {
      refusal = Refusal::key;
      return make_error(failure);
    }
    plain.resize(static_cast<size_t>(plain_len));
    auto identity = decode_identity(plain);
    if (!identity) {
      refusal = Refusal::malformed;
      return make_error("handshake failed: the peer's identity is malformed");
    }
    transcript.append(framed.data(), framed.size());
    return *identity;
  }

  bool gather(std::string_view& in, size_t want) {
    return handshake_bytes::gather(pending, in, want);
  }

  // A sealed identity message (u16 length, then the AEAD) complete in `pending` after `offset`?
  Result<bool> gather_sealed(std::string_view& in, size_t offset) {
    if (!gather(in, offset + 2)) return false;
    size_t length = read_be16(pending.data() + offset);
    if (length < kMinSealedIdentity || length > kMaxSealedIdentity)
      return make_error(cat("handshake failed: a sealed identity of ", length, " bytes"));
    return gather(in, offset + 2 + length);
  }

  // crypto_kx's tx is always this side's outgoing direction, rx the incoming one.
  void finish(const char* send_label, const char* receive_label) {
    derive(result.send_key.data(), send_label, keys().tx);
    derive(result.receive_key.data(), receive_label, keys().rx);
    secret.wipe();
    transcript.clear();
    pending.clear();
    step = Step::done;
  }

  Error no_common_cipher(Ciphers offered) const {
    return make_error(cat("handshake failed: the peer offers record ciphers 0x", hex_byte(offered),
                          " and this side 0x", hex_byte(ciphers), ": none in common"));
  }

  Result<bool> fail(Error error, Refusal why) {
    step = Step::failed;
    refusal = why;
    secret.wipe();
    return error;
  }

  Result<bool> on_m1(std::string_view& in, std::string& out) {
    // Judge the magic byte by byte, so garbage is refused at its first wrong byte.
    size_t before = pending.size();
    gather(in, kM1);
    size_t check = std::min(pending.size(), kHandshakeMagic.size());
    for (size_t i = before; i < check; ++i)
      if (pending[i] != kHandshakeMagic[i])
        return fail(make_error("not a Lattice handshake (plaintext rpc or another protocol?)"),
                    Refusal::not_lattice);
    // The version as soon as it is in: an older peer's M1 may be shorter than ours.
    if (pending.size() > kHandshakeMagic.size()) {
      auto version = static_cast<uint8_t>(pending[kHandshakeMagic.size()]);
      const bool certified = credentials.authority().has_value();
      if (version == kHandshakeVersion) {
        v3 = std::make_unique<HandshakeV3>(side, credentials, self, ciphers);
        if (fixed_nonce) v3->fix_ephemeral_for_test_vectors(keys().ephemeral_secret);
        secret.wipe();
        std::string_view gathered(pending);
        auto progress = v3->receive(gathered, out);
        pending.clear();
        return progress ? v3->receive(in, out) : progress;
      }
      if (version != kOldestHandshakeVersion || certified) {
        out += kHandshakeMagic;
        out.push_back(static_cast<char>(kHandshakeVersion));
        return fail(
            make_error(cat("handshake version ", int{version}, " is not supported (this is ",
                           certified
                               ? "3 only, as it requires certified identities"
                               : cat(int{kOldestHandshakeVersion}, " to ", int{kHandshakeVersion}),
                           ")")),
            Refusal::version);
      }
    }
    if (pending.size() < kM1) return false;
    auto offered = static_cast<Ciphers>(pending[kHandshakeMagic.size() + 1]);
    auto cipher = choose_cipher(ciphers, offered);
    if (!cipher) return fail(no_common_cipher(offered), Refusal::ciphers);
    result.cipher = *cipher;
    const auto* peer_public =
        reinterpret_cast<const uint8_t*>(pending.data()) + kHandshakeMagic.size() + 2;
    make_ephemeral();
    // Server session keys: rx = initiator -> responder, tx = responder -> initiator.
    if (crypto_kx_server_session_keys(keys().rx, keys().tx, ephemeral_public,
                                      keys().ephemeral_secret, peer_public) != 0)
      return fail(make_error("handshake failed: unusable ephemeral key"), Refusal::malformed);
    uint8_t nonce[kNonce];
    make_nonce(nonce);
    std::string m2(reinterpret_cast<const char*>(ephemeral_public), kPublicKey);
    m2.append(reinterpret_cast<const char*>(nonce), kNonce);
    m2.push_back(static_cast<char>(ciphers));
    transcript += pending;
    transcript += m2;
    out += m2;
    seal_identity(out, kHandshakeRI, keys().tx);
    pending.clear();
    step = Step::await_m3;
    return false;
  }

  Result<bool> on_m2(std::string_view& in, std::string& out) {
    // A responder of another version says which (kVersionNotice) and closes.
    if (!gather(in, kVersionNotice)) return false;
    if (std::string_view(pending).substr(0, kHandshakeMagic.size()) == kHandshakeMagic)
      return fail(version_notice_error(static_cast<uint8_t>(pending[kHandshakeMagic.size()])),
                  Refusal::version);
    auto complete = gather_sealed(in, kM2Clear);
    if (!complete) return fail(complete.error(), Refusal::malformed);
    if (!*complete) return false;
    // The responder's offer is in the transcript its proof covers, as ours in M1 is.
    auto offered = static_cast<Ciphers>(pending[kPublicKey + kNonce]);
    auto cipher = choose_cipher(ciphers, offered);
    if (!cipher) return fail(no_common_cipher(offered), Refusal::ciphers);
    result.cipher = *cipher;
    const auto* peer_public = reinterpret_cast<const uint8_t*>(pending.data());
    // Client session keys: rx = responder -> initiator, tx = initiator -> responder.
    if (crypto_kx_client_session_keys(keys().rx, keys().tx, ephemeral_public,
                                      keys().ephemeral_secret, peer_public) != 0)
      return fail(make_error("handshake failed: unusable ephemeral key"), Refusal::malformed);
    transcript.append(pending.data(), kM2Clear);
    auto peer = open_identity(std::string_view(pending).substr(kM2Clear), kHandshakeRI, keys().rx,
                              kPeerLacksKey);
    if (!peer) return fail(peer.error(), refusal);
    result.peer = std::move(peer.value());
    seal_identity(out, kHandshakeIR, keys().tx);
    finish(kTrafficIR, kTrafficRI);
    return true;
  }

  Result<bool> on_m3(std::string_view& in) {
    auto complete = gather_sealed(in, 0);
    if (!complete) return fail(complete.error(), Refusal::malformed);
    if (!*complete) return false;
    auto peer = open_identity(pending, kHandshakeIR, keys().rx, kInitiatorLacksKey);
    if (!peer) return fail(peer.error(), refusal);
    result.peer = std::move(peer.value());
    finish(kTrafficRI, kTrafficIR);
    return true;
  }
};

Handshake::Handshake(Side side, const Credentials& credentials, Identity self,
                     std::shared_ptr<const EphemeralKey> shared, Ciphers ciphers)
    : s_(std::make_unique<State>(side, credentials, std::move(self),
                                 side == Side::initiator ? std::move(shared) : nullptr, ciphers)) {
  if (side == Side::responder) s_->step = State::Step::await_m1;
}

Handshake::~Handshake() = default;

std::string Handshake::start() {
  if (s_->side != Side::initiator || s_->step != State::Step::start) return {};
  if (s_->credentials.initiate_version == kHandshakeVersion) {
    s_->v3 = std::make_unique<HandshakeV3>(s_->side, s_->credentials, s_->self, s_->ciphers);
    if (s_->fixed_nonce) s_->v3->fix_ephemeral_for_test_vectors(s_->keys().ephemeral_secret);
    s_->secret.wipe();
    s_->shared.reset();
    s_->step = State::Step::await_m2;
    return s_->v3->start();
  }
  if (s_->shared) {
    // A copy into this handshake's own guarded block, wiped with it; the shared pair is let
    // go here so that it is wiped as soon as every link's handshake has started.
    std::memcpy(s_->ephemeral_public, s_->shared->public_key(), kPublicKey);
    std::memcpy(s_->keys().ephemeral_secret, s_->shared->secret_key(), kPublicKey);
    s_->shared.reset();
  } else {
    s_->make_ephemeral();
  }
  uint8_t nonce[kNonce];
  s_->make_nonce(nonce);
  std::string m1(kHandshakeMagic);
  m1.push_back(static_cast<char>(kOldestHandshakeVersion));
  m1.push_back(static_cast<char>(s_->ciphers));
  m1.append(reinterpret_cast<const char*>(s_->ephemeral_public), kPublicKey);
  m1.append(reinterpret_cast<const char*>(nonce), kNonce);
  s_->transcript += m1;
  s_->step = State::Step::await_m2;
  return m1;
}

Result<bool> Handshake::receive(std::string_view& in, std::string& out) {
  if (s_->v3) return s_->v3->receive(in, out);
  return handshake_bytes::drive(in, [&]() -> Result<bool> {
    switch (s_->step) {
      case State::Step::await_m1:
        return s_->on_m1(in, out);
      case State::Step::await_m2:
        return s_->on_m2(in, out);
      case State::Step::await_m3:
        return s_->on_m3(in);
      case State::Step::done:
        return true;
      case State::Step::start:
        return make_error("handshake not started");
      case State::Step::failed:
        break;
    }
    return make_error("handshake failed earlier");
  });
}

HandshakeResult Handshake::take_result() {
  return s_->v3 ? s_->v3->take_result() : std::move(s_->result);
}

Refusal Handshake::refusal() const { return s_->v3 ? s_->v3->refusal() : s_->refusal; }

Error version_notice_error(uint8_t theirs) {
  return make_error(cat("the peer speaks handshake version ", int{theirs}, " and this side ",
                        int{kOldestHandshakeVersion}, " to ", int{kHandshakeVersion},
                        ": its Lattice release does not match this one's (compare `lattice "
                        "--version` and `lattice-agentd --version`; while a cluster upgrades "
                        "from 0.2.0, set security.handshake: 2)"));
}

void Handshake::fix_randomness_for_test_vectors(const uint8_t secret_key[EphemeralKey::kBytes],
                                                const uint8_t nonce[kNonce]) {
  // The pair crypto_kx_keypair would have made from this secret (it is a base-point product).
  std::memcpy(s_->keys().ephemeral_secret, secret_key, crypto_kx_SECRETKEYBYTES);
  crypto_scalarmult_base(s_->ephemeral_public, secret_key);
  s_->fixed_nonce.emplace();
  std::memcpy(s_->fixed_nonce->data(), nonce, kNonce);
  s_->shared.reset();
}

const char* refusal_name(Refusal refusal) {
  switch (refusal) {
    case Refusal::none:
      return "";
    case Refusal::not_lattice:
      return "not_lattice";
    case Refusal::version:
      return "version";
    case Refusal::ciphers:
      return "ciphers";
    case Refusal::key:
      return "key";
    case Refusal::certificate:
      return "certificate";
    case Refusal::malformed:
      return "malformed";
  }
  return "";
}

}  // namespace lattice::secure
