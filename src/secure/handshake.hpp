// The three-message handshake that opens every TCP link (docs/protocol.md has its bytes,
// docs/security.md its reasons). Version 3 is Noise (handshake_v3.hpp); version 2, answered
// for peers of release 0.2.0, is this:
//   M1 initiator -> responder: magic, version, record ciphers offered, ephemeral X25519 key,
//                              nonce
//   M2 responder -> initiator: ephemeral key, nonce, ciphers offered, AEAD(identity) under a key
//                              that needs the cluster key, both ephemerals and the transcript
//   M3 initiator -> responder: AEAD(identity) likewise, over the transcript including M2
// Both directions' traffic keys come from the ephemeral exchange (forward secrecy), keyed with
// the cluster key and bound to the whole transcript (nonces, both offers and both
// identities, so nobody in between can make the sides settle for a weaker cipher). Pure: bytes
// in, bytes out; the caller moves them and enforces the deadline.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/credentials.hpp"
#include "secure/ephemeral_key.hpp"
#include "secure/identity.hpp"
#include "secure/record.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

// 8 bytes no other protocol of ours starts with (a plaintext Cap'n Proto frame begins with a
// little-endian segment count, HTTP with a verb): refused at the first byte that differs.
constexpr std::string_view kHandshakeMagic = "LTCSEAL\x01";
// The versions of the handshake and the records this side answers: 2 (its own key exchange)
// and 3 (Noise, with certified identities: handshake_v3.hpp); a peer of another is refused here,
// by name. The messages after it have a version of their own, which adjacent releases share
// (rpc/version.hpp).
constexpr uint8_t kHandshakeVersion = 3;
constexpr uint8_t kOldestHandshakeVersion = 2;
// A responder that refuses the initiator's version answers with the magic and its own version
// byte before it closes, in place of M2 (whose first bytes are a random public key), so the
// initiator can name both versions too instead of seeing the link end.
constexpr size_t kVersionNotice = kHandshakeMagic.size() + 1;
// The most bytes a responder holds for an unauthenticated peer: M1 and M3 are at most this big
// (an identity and a certificate in 3).
constexpr size_t kMaxHandshakeMessage = 1024;

// Why a handshake was refused, for counting (metrics); the error's text says it to people.
//   not_lattice: not our magic; version: another handshake version; ciphers: no record cipher
//   in common; key: the peer does not hold the cluster key; certificate: its identity is not
//   certified by this side's authority; malformed: bad lengths or keys.
enum class Refusal { none, not_lattice, version, ciphers, key, certificate, malformed };
const char* refusal_name(Refusal refusal);  // "key", ...; "" for none
// What an initiator says when the responder answered with a version notice naming `theirs`.
Error version_notice_error(uint8_t theirs);

struct HandshakeResult {
  Identity peer;
  Secret send_key{32};                        // this side's traffic key out
  Secret receive_key{32};                     // and in
  Cipher cipher = Cipher::xchacha20poly1305;  // the records' (both offered it)
  std::optional<StaticKey> certified_key;     // the peer's, when its certificate was checked
};

class Handshake {
 public:
  enum class Side { initiator, responder };
  // An initiator opens with credentials.initiate_version. In version 2, an initiator given
  // `shared` uses that key pair (see ephemeral_key.hpp) instead of making its own; a responder
  // always makes its own. `ciphers`: what this side offers (tests offer less than the machine
  // can run). `credentials` must outlive the handshake.
  Handshake(Side side, const Credentials& credentials, Identity self,
            std::shared_ptr<const EphemeralKey> shared = {}, Ciphers ciphers = local_ciphers());
  ~Handshake();
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;

  // The initiator's M1; empty for a responder.
  std::string start();
  // Consumes handshake bytes from the front of `in` (never more than the handshake needs, so
  // what follows M3 stays in `in`) and appends what must be sent to `out`. True once complete;
  // an error means the peer must be dropped (the text says why, for the log).
  Result<bool> receive(std::string_view& in, std::string& out);
  // Valid once receive() returned true; the handshake's own secrets are wiped by then.
  HandshakeResult take_result();
  // Refusal::none until receive() returned an error.
  Refusal refusal() const;

  // For the test vectors of docs/protocol.md only: this side's ephemeral X25519 secret key and
  // nonce, in place of random ones (and of a shared key pair). Call before start() or the first
  // receive(). Fixed values would repeat keys across links: production code never calls this.
  // Version 3 uses the secret only.
  void fix_randomness_for_test_vectors(const uint8_t secret_key[EphemeralKey::kBytes],
                                       const uint8_t nonce[32]);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace lattice::secure
