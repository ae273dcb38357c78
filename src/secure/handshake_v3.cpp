// Handshake 3's framing and identities around the Noise core. Every payload is bounded before
// it is gathered: M2 and M3 carry at most an identity and a certificate.
#include "secure/handshake_v3.hpp"

#include <ctime>
#include <optional>

#include "base/strings.hpp"
#include "secure/handshake_bytes.hpp"
#include "secure/handshake_payload.hpp"
#include "secure/noise.hpp"

namespace lattice::secure {
namespace {

using handshake_bytes::append_be16;
using handshake_bytes::read_be16;

constexpr uint8_t kVersion = 3;
constexpr size_t kHeader = kHandshakeMagic.size() + 2;  // magic, version, ciphers: the prologue
constexpr size_t kM1 = kHeader + noise::kMessage1Bytes;
constexpr size_t kMinIdentityPayload = 3 + 2;  // a one-byte name, no certificate
constexpr size_t kMaxIdentityPayload = 2 + kMaxIdentityName + 2 + kMaxCertificate;
constexpr size_t kMinM2 = noise::kMessage2Bytes + 2 + kMinIdentityPayload;
constexpr size_t kMinM3 = noise::kMessage3Bytes + kMinIdentityPayload;
constexpr size_t kMaxM2 = noise::kMessage2Bytes + 2 + kMaxIdentityPayload;
constexpr size_t kMaxM3 = noise::kMessage3Bytes + kMaxIdentityPayload;
// A responder that finds M1 does not prove the cluster key says so in the clear, in place of M2:
// the magic, version 3 and this byte. Unauthenticated, so the initiator only reports it.
constexpr char kKeyRefusal = 1;
static_assert(2 + kMaxM2 <= kMaxHandshakeMessage && 2 + kMaxM3 <= kMaxHandshakeMessage);

// This side's claim: its identity, and its certificate when it has one.
Claim own_claim(const Identity& self, const Credentials& credentials) {
  const OwnIdentity* own = credentials.own();
  return Claim{self, own ? own->certificate_bytes : std::string()};
}

}  // namespace

struct HandshakeV3::State {
  enum class Step { await_m1, await_m2, await_m3, done, failed };

  State(Handshake::Side s, const Credentials& c, Identity me, Ciphers offer)
      : side(s), credentials(c), self(std::move(me)), ciphers(offer) {}

  Handshake::Side side;
  const Credentials& credentials;
  Identity self;
  Ciphers ciphers;
  Step step = Step::await_m1;
  Refusal refusal = Refusal::none;
  std::optional<noise::XXpsk0> noise;
  std::string pending;
  HandshakeResult result;
  std::optional<std::array<uint8_t, 32>> fixed_ephemeral;

  std::string prologue(Ciphers offer) const {
    std::string out(kHandshakeMagic);
    out.push_back(static_cast<char>(kVersion));
    out.push_back(static_cast<char>(offer));
    return out;
  }

  void make_noise(Ciphers initiator_offer) {
    noise.emplace(side == Handshake::Side::initiator ? noise::XXpsk0::Role::initiator
                                                     : noise::XXpsk0::Role::responder,
                  prologue(initiator_offer), credentials.cluster_key().data(),
                  credentials.static_secret(), credentials.static_public().data());
    if (fixed_ephemeral) noise->fix_ephemeral_for_test_vectors(fixed_ephemeral->data());
  }

  Result<bool> fail(Error error, Refusal why) {
    step = Step::failed;
    refusal = why;
    noise.reset();
    return error;
  }

  bool gather(std::string_view& in, size_t want) {
    return handshake_bytes::gather(pending, in, want);
  }

  // A u16-framed message of at most `max` bytes, complete in `pending`?
  Result<bool> gather_framed(std::string_view& in, size_t min, size_t max) {
    if (!gather(in, 2)) return false;
    size_t length = read_be16(pending.data());
    if (length < min || length > max)
      return make_error(cat("handshake failed: a handshake message of ", length, " bytes"));
    return gather(in, 2 + length);
  }

  // The peer's identity, checked against this side's authority when it has one.
  Result<Identity> judge(std::optional<Claim> claim) {
    if (!claim) {
      refusal = Refusal::malformed;
      return make_error("handshake failed: the peer's identity is malformed");
    }
    const auto& authority = credentials.authority();
    if (!authority) return std::move(claim->identity);
    auto refuse = [&](const std::string& why) {
      refusal = Refusal::certificate;
      return make_error(
          cat("handshake failed: ", describe(claim->identity), " is not certified: ", why));
    };
    if (claim->certificate.empty())
      return refuse(cat("it sent no certificate, and this side requires one from authority ",
                        authority_id(*authority),
                        " (give it an identity file: lattice-agentd "
                        "--certify)"));
    auto certificate = decode_certificate(claim->certificate);
    if (!certificate) return refuse(certificate.error().message);
    StaticKey proved{};
    auto remote = noise->remote_static();
    std::copy(remote.begin(), remote.end(), proved.begin());
    auto checked = check_certificate(*certificate, *authority, claim->identity, proved,
                                     static_cast<uint64_t>(std::time(nullptr)));
    if (!checked) return refuse(checked.error().message);
    if (credentials.revoked().count(proved))
      return refuse(cat("its certificate (static key ", static_key_hex(proved),
                        ") is revoked (security.revoked)"));
    result.certified_key = proved;
    return std::move(claim->identity);
  }

  Result<bool> finish() {
    Status split = side == Handshake::Side::initiator
                       ? noise->split(result.send_key.data(), result.receive_key.data())
                       : noise->split(result.receive_key.data(), result.send_key.data());
    noise.reset();
    pending.clear();
    if (!split) return fail(split.error(), Refusal::malformed);
    step = Step::done;
    return true;
  }

  Error no_common_cipher(Ciphers offered) const {
    return make_error(cat("handshake failed: the peer offers record ciphers 0x",
                          to_hex(std::string(1, static_cast<char>(offered))), " and this side 0x",
                          to_hex(std::string(1, static_cast<char>(ciphers))), ": none in common"));
  }

  // The front (handshake.cpp) has judged the magic and the version already.
  Result<bool> on_m1(std::string_view& in, std::string& out) {
    if (!gather(in, kM1)) return false;
    auto offered = static_cast<Ciphers>(pending[kHandshakeMagic.size() + 1]);
    auto cipher = choose_cipher(ciphers, offered);
    make_noise(offered);
    // The key first: a peer without it learns nothing, not even which ciphers we offer.
    auto payload = noise->read_message(std::string_view(pending).substr(kHeader));
    if (!payload) {
      out += prologue(ciphers).substr(0, kVersionNotice);
      out.push_back(kKeyRefusal);
      return fail(make_error("handshake failed: the initiator's proof does not verify (another "
                             "cluster key, or a tampered handshake)"),
                  Refusal::key);
    }
    if (!payload->empty())
      return fail(make_error("handshake failed: the initiator's first message has a payload"),
                  Refusal::malformed);
    if (!cipher) return fail(no_common_cipher(offered), Refusal::ciphers);
    result.cipher = *cipher;
    auto m2 = noise->write_message(encode_responder_payload(
        {ciphers, static_cast<uint8_t>(credentials.authority() ? kRequiresCertificate : 0),
         own_claim(self, credentials)}));
    if (!m2) return fail(m2.error(), Refusal::malformed);
    append_be16(out, m2->size());
    out += *m2;
    pending.clear();
    step = Step::await_m3;
    return false;
  }

  Result<bool> on_m2(std::string_view& in, std::string& out) {
    // A responder that refuses version 3 answers with the magic and its own version instead;
    // M2's length can never start with the magic's first byte.
    if (!gather(in, 1)) return false;
    if (pending[0] == kHandshakeMagic[0]) {
      if (!gather(in, kVersionNotice)) return false;
      if (std::string_view(pending).substr(0, kHandshakeMagic.size()) == kHandshakeMagic) {
        auto version = static_cast<uint8_t>(pending[kHandshakeMagic.size()]);
        if (version != kVersion) return fail(version_notice_error(version), Refusal::version);
        if (!gather(in, kVersionNotice + 1)) return false;
        return fail(make_error("handshake refused by the peer: it says this side's cluster key is "
                               "not its own (compare the key ids both sides log)"),
                    Refusal::key);
      }
    }
    auto complete = gather_framed(in, kMinM2, kMaxM2);
    if (!complete) return fail(complete.error(), Refusal::malformed);
    if (!*complete) return false;
    auto payload = noise->read_message(std::string_view(pending).substr(2));
    if (!payload)
      return fail(make_error("handshake failed: the peer's proof does not verify (it holds "
                             "another cluster key, or the handshake was tampered with)"),
                  Refusal::key);
    auto responder = decode_responder_payload(*payload);
    if (!responder)
      return fail(make_error("handshake failed: the peer's identity is malformed"),
                  Refusal::malformed);
    auto cipher = choose_cipher(ciphers, responder->ciphers);
    if (!cipher) return fail(no_common_cipher(responder->ciphers), Refusal::ciphers);
    result.cipher = *cipher;
    auto peer = judge(std::move(responder->claim));
    if (!peer) return fail(peer.error(), refusal);
    if ((responder->flags & kRequiresCertificate) && !credentials.own())
      return fail(make_error(cat(describe(*peer),
                                 " requires a certified identity and this side has none (an "
                                 "identity file: security.identity_file, or "
                                 "$LATTICE_IDENTITY_FILE)")),
                  Refusal::certificate);
    result.peer = std::move(peer.value());
    auto m3 = noise->write_message(encode_claim(own_claim(self, credentials)));
    if (!m3) return fail(m3.error(), Refusal::malformed);
    append_be16(out, m3->size());
    out += *m3;
    return finish();
  }

  Result<bool> on_m3(std::string_view& in) {
    auto complete = gather_framed(in, kMinM3, kMaxM3);
    if (!complete) return fail(complete.error(), Refusal::malformed);
    if (!*complete) return false;
    auto payload = noise->read_message(std::string_view(pending).substr(2));
    if (!payload)
      return fail(make_error("handshake failed: the initiator's proof does not verify (another "
                             "cluster key, or a replayed or tampered handshake)"),
                  Refusal::key);
    auto peer = judge(decode_claim(*payload));
    if (!peer) return fail(peer.error(), refusal);
    result.peer = std::move(peer.value());
    return finish();
  }
};

HandshakeV3::HandshakeV3(Handshake::Side side, const Credentials& credentials, const Identity& self,
                         Ciphers ciphers)
    : s_(std::make_unique<State>(side, credentials, self, ciphers)) {}

HandshakeV3::~HandshakeV3() = default;

std::string HandshakeV3::start() {
  s_->make_noise(s_->ciphers);
  auto m1 = s_->noise->write_message({});
  if (!m1) return {};
  std::string out = s_->prologue(s_->ciphers);
  out += *m1;
  s_->step = State::Step::await_m2;
  return out;
}

Result<bool> HandshakeV3::receive(std::string_view& in, std::string& out) {
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
      case State::Step::failed:
        break;
    }
    return make_error("handshake failed earlier");
  });
}

HandshakeResult HandshakeV3::take_result() { return std::move(s_->result); }

Refusal HandshakeV3::refusal() const { return s_->refusal; }

void HandshakeV3::fix_ephemeral_for_test_vectors(const uint8_t secret[32]) {
  s_->fixed_ephemeral.emplace();
  std::copy(secret, secret + 32, s_->fixed_ephemeral->begin());
}

}  // namespace lattice::secure
