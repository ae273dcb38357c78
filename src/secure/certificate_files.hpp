// The files of certified identities (certificate.hpp), made by lattice-agentd on the operators'
// host and copied out like the cluster key:
//   the authority's secret key: its Ed25519 secret, 64 bytes, mode 0600, kept off the cluster;
//   the authority's public key (FILE.pub): one hex line, which every agent and launcher trusts;
//   an identity file per agent or launcher: "LTCIDNT", a version byte, the holder's static
//   X25519 secret (32 bytes), in version 2 the seed of its Ed25519 signing key (32 bytes), then
//   its certificate (of the same version); mode 0600. Launchers get version 2, agents 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "secure/certificate.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

constexpr std::string_view kIdentityFileMagic = "LTCIDNT";  // then the version byte
constexpr size_t kSigningSeedBytes = 32;
constexpr size_t kSigningSecretBytes = 64;  // libsodium's crypto_sign layout: seed | public key

// This side's certified identity, its secrets in guarded memory.
struct OwnIdentity {
  Secret static_secret{kStaticKeyBytes};
  std::optional<Secret> signing_secret;  // with a version 2 certificate
  Certificate certificate;
  std::string certificate_bytes;  // as sent in the handshake
};

// Checks the file (private_file.hpp) and that its certificate is for its static key; errors name
// the file.
Result<OwnIdentity> load_identity_file(const std::string& path);
Result<CaPublicKey> load_authority_file(const std::string& path);

// Writes a new authority: `secret_path` (0600) and `secret_path`.pub; refuses to overwrite.
Status generate_authority_files(const std::string& secret_path);
// Makes a static key for `holder` (and for a launcher a signing key), certifies it with the
// authority's secret key for `days` from `now`, and writes both to the identity file `out_path`
// (0600, never overwritten).
// Returns the certificate made.
Result<Certificate> certify_identity(const std::string& ca_secret_path, const Identity& holder,
                                     uint64_t days, uint64_t now, const std::string& out_path);

}  // namespace lattice::secure
