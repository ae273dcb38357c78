#include "secure/signature.hpp"

#include <sodium.h>

#include "base/strings.hpp"

namespace lattice::secure {

static_assert(crypto_sign_BYTES == kSignatureBytes);

Result<Signature> sign_message(const OwnIdentity& own, const uint8_t* message, size_t size) {
  if (!own.signing_secret)
    return make_error(cat(describe(own.certificate.holder),
                          "'s certificate has no signing key (a version 1 certificate: certify "
                          "it again with lattice-agentd --certify from 0.3.1 on)"));
  Signature signature{};
  crypto_sign_detached(signature.data(), nullptr, message, size, own.signing_secret->data());
  return signature;
}

bool verify_message(const Certificate& signer, const uint8_t* message, size_t size,
                    const Signature& signature) {
  return signer.signing_key && crypto_sign_verify_detached(signature.data(), message, size,
                                                           signer.signing_key->data()) == 0;
}

}  // namespace lattice::secure
