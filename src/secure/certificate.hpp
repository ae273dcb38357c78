// Certified identities (docs/security.md, "Node identities"): the operators' certificate
// authority, an Ed25519 key pair kept off the cluster, signs each agent's and launcher's role,
// name and static X25519 key. A link's Noise handshake proves the peer holds that static key, so
// with a certificate the peer can speak only as the name it was certified for, whatever else it
// holds (the cluster key included). Pure: bytes in, values out; files are certificate_files.hpp.
//
// A certificate's bytes (all integers big-endian):
//   "LTCCERT" | version (1) | role (1) | name length (1) | name | static key (32) |
//   [version 2: signing key (32)] | not after (8, Unix seconds) |
//   Ed25519 signature (64) over every byte before it
// Version 2 (0.3.1) adds an Ed25519 key the holder signs with: launchers sign the relayed
// launches they start (wire/launch_signature.hpp). Version 1 certificates stay valid.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/identity.hpp"

namespace lattice::secure {

constexpr std::string_view kCertificateMagic = "LTCCERT";  // then the version byte
constexpr uint8_t kCertificateVersion = 1;
constexpr uint8_t kSigningCertificateVersion = 2;
constexpr size_t kStaticKeyBytes = 32;
constexpr size_t kSigningKeyBytes = 32;
constexpr size_t kCaPublicKeyBytes = 32;
constexpr size_t kCaSignatureBytes = 64;
constexpr size_t kMaxCertificate = kCertificateMagic.size() + 3 + kMaxIdentityName +
                                   kStaticKeyBytes + kSigningKeyBytes + 8 + kCaSignatureBytes;

using StaticKey = std::array<uint8_t, kStaticKeyBytes>;
using SigningKey = std::array<uint8_t, kSigningKeyBytes>;
using CaPublicKey = std::array<uint8_t, kCaPublicKeyBytes>;

struct Certificate {
  Identity holder;
  StaticKey static_key{};
  std::optional<SigningKey> signing_key;  // version 2 only
  uint64_t not_after = 0;                 // Unix seconds
  std::array<uint8_t, kCaSignatureBytes> signature{};
};

// The bytes the authority signs: everything but the signature.
std::string certificate_body(const Certificate& certificate);
std::string encode_certificate(const Certificate& certificate);
// Well-formed bytes only (magic, a launcher's or agent's identity, exact length); the signature
// is not checked here.
Result<Certificate> decode_certificate(std::string_view bytes);

// Signs `certificate` in place with an authority's Ed25519 secret key (64 bytes, libsodium's
// crypto_sign layout).
void sign_certificate(Certificate& certificate, const uint8_t ca_secret[64]);

// Whether `certificate`, signed by the authority `ca` and valid at `now`, certifies `claimed`;
// the error says what does not match, for the log.
Status check_certified(const Certificate& certificate, const CaPublicKey& ca,
                       const Identity& claimed, uint64_t now);
// The same, and that `static_key` (the one a handshake proved) is the certificate's.
Status check_certificate(const Certificate& certificate, const CaPublicKey& ca,
                         const Identity& claimed, const StaticKey& static_key, uint64_t now);

// A short public name for an authority (hex of its key's first 8 bytes), for logs.
std::string authority_id(const CaPublicKey& ca);

}  // namespace lattice::secure
