#include "secure/ephemeral_key.hpp"

#include <sodium.h>

namespace lattice::secure {

static_assert(EphemeralKey::kBytes == crypto_kx_PUBLICKEYBYTES &&
              EphemeralKey::kBytes == crypto_kx_SECRETKEYBYTES);

EphemeralKey::EphemeralKey() { crypto_kx_keypair(public_, secret_.data()); }

std::shared_ptr<const EphemeralKey> EphemeralKey::generate() {
  return std::shared_ptr<const EphemeralKey>(new EphemeralKey());
}

}  // namespace lattice::secure
