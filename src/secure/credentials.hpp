// What this side brings to a sealed link's handshake (handshake.hpp):
//   the cluster key, which every agent and launcher holds (handshake 3's Noise PSK);
//   a static X25519 key: certified by the operators' authority when an identity file is given,
//   else one made for this process;
//   the authority whose certificates it requires of its peers. Without one (the simple mode)
//   a peer's claimed name is taken on the cluster key alone, as in handshake 2;
//   the static keys whose certificates it no longer takes (revocation.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "secure/certificate.hpp"
#include "secure/certificate_files.hpp"
#include "secure/cluster_key.hpp"
#include "secure/revocation.hpp"

namespace lattice::secure {

class Credentials {
 public:
  explicit Credentials(ClusterKey key, std::optional<OwnIdentity> own = {},
                       std::optional<CaPublicKey> authority = {});
  Credentials(Credentials&&) noexcept;
  ~Credentials();

  const ClusterKey& cluster_key() const { return key_; }
  const uint8_t* static_secret() const;
  const StaticKey& static_public() const { return static_public_; }
  const OwnIdentity* own() const { return own_ ? &*own_ : nullptr; }
  const std::optional<CaPublicKey>& authority() const { return authority_; }
  const RevokedKeys& revoked() const { return revoked_; }
  // Replaces the revoked keys (an agent's start and SIGHUP): later handshakes and launch
  // signatures are judged by the new list.
  void set_revoked(RevokedKeys keys) { revoked_ = std::move(keys); }

  // The handshake version this side opens links with: 3, or 2 while a cluster upgrades from a
  // release without handshake 3 (security.handshake). Responders answer both.
  uint8_t initiate_version = 3;

 private:
  ClusterKey key_;
  std::optional<OwnIdentity> own_;
  std::optional<CaPublicKey> authority_;
  RevokedKeys revoked_;
  Secret process_static_{kStaticKeyBytes};  // used when there is no identity file
  StaticKey static_public_{};               // static_secret()'s, computed once
};

// The cluster key file, and when not empty the identity file and the authority's public key
// file; errors name the file.
Result<Credentials> load_credentials(const std::string& key_file, const std::string& identity_file,
                                     const std::string& authority_file);

}  // namespace lattice::secure
