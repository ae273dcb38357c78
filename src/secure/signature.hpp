// Signatures by a certified identity's own signing key (a version 2 certificate's): a launcher
// signs the relayed launches it starts, so that every node of one can tell the request is the
// launcher's, whichever agents passed it on (wire/launch_signature.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/result.hpp"
#include "secure/certificate_files.hpp"

namespace lattice::secure {

constexpr size_t kSignatureBytes = 64;
using Signature = std::array<uint8_t, kSignatureBytes>;

// Ed25519 over `message` with `own`'s signing key; an error when its identity has none (a
// version 1 certificate, or an agent's).
Result<Signature> sign_message(const OwnIdentity& own, const uint8_t* message, size_t size);
// Whether `signature` is the signing key's of `signer` over `message` (false without one).
bool verify_message(const Certificate& signer, const uint8_t* message, size_t size,
                    const Signature& signature);

}  // namespace lattice::secure
