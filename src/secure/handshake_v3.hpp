// Handshake version 3 (docs/protocol.md): Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b (noise.hpp) with
// the cluster key as its PSK, framed so it starts like every Lattice handshake:
//   M1 initiator -> responder: magic, version 3, record ciphers offered, Noise message 1
//                              (the first 10 bytes are the Noise prologue)
//   M2 responder -> initiator: u16 length, Noise message 2; its payload: the responder's cipher
//                              offer, flags, its identity and its certificate (may be empty)
//   M3 initiator -> responder: u16 length, Noise message 3; its payload: identity, certificate
// A side with an authority (credentials.hpp) takes a peer's identity only with a certificate
// for it and for the static key the peer proved; without one, on the cluster key as in 2.
// Internal to handshake.cpp, which routes by version.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/credentials.hpp"
#include "secure/handshake.hpp"

namespace lattice::secure {

class HandshakeV3 {
 public:
  HandshakeV3(Handshake::Side side, const Credentials& credentials, const Identity& self,
              Ciphers ciphers);
  ~HandshakeV3();
  HandshakeV3(const HandshakeV3&) = delete;
  HandshakeV3& operator=(const HandshakeV3&) = delete;

  std::string start();  // the initiator's M1
  // As Handshake::receive; a responder's first bytes are M1 from its magic on.
  Result<bool> receive(std::string_view& in, std::string& out);
  HandshakeResult take_result();
  Refusal refusal() const;

  // Test vectors only (Handshake::fix_randomness_for_test_vectors).
  void fix_ephemeral_for_test_vectors(const uint8_t secret[32]);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace lattice::secure
