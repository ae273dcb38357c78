// An X25519 key pair an initiator may use for the handshakes of many links opened together
// (a launcher's links to every node of one launch). Making a key pair is half of an initiator's
// handshake CPU (a base-point multiplication, ~47 µs here); the other half, the exchange with
// each peer's fresh key, stays per link, and so do the nonces, so every link still gets its own
// keys. The secret lives in guarded memory and is wiped when the last holder lets it go: once
// the links are up, so a recorded session stays undecryptable (forward secrecy).
#pragma once

#include <cstdint>
#include <memory>

#include "secure/secret.hpp"

namespace lattice::secure {

class EphemeralKey {
 public:
  static constexpr size_t kBytes = 32;

  static std::shared_ptr<const EphemeralKey> generate();

  const uint8_t* public_key() const { return public_; }
  const uint8_t* secret_key() const { return secret_.data(); }

 private:
  EphemeralKey();

  uint8_t public_[kBytes] = {};
  Secret secret_{kBytes};
};

}  // namespace lattice::secure
