#include "secure/credentials.hpp"

#include <sodium.h>

#include <ctime>

#include "base/strings.hpp"

namespace lattice::secure {

Credentials::Credentials(ClusterKey key, std::optional<OwnIdentity> own,
                         std::optional<CaPublicKey> authority)
    : key_(std::move(key)), own_(std::move(own)), authority_(authority) {
  if (!own_) random_bytes(process_static_.data(), process_static_.size());
  crypto_scalarmult_base(static_public_.data(), static_secret());
}

Credentials::Credentials(Credentials&&) noexcept = default;
Credentials::~Credentials() = default;

const uint8_t* Credentials::static_secret() const {
  return own_ ? own_->static_secret.data() : process_static_.data();
}

Result<Credentials> load_credentials(const std::string& key_file, const std::string& identity_file,
                                     const std::string& authority_file) {
  auto key = ClusterKey::load(key_file);
  if (!key) return key.error();
  std::optional<OwnIdentity> own;
  if (!identity_file.empty()) {
    auto loaded = load_identity_file(identity_file);
    if (!loaded) return loaded.error();
    own.emplace(std::move(loaded.value()));
  }
  std::optional<CaPublicKey> authority;
  if (!authority_file.empty()) {
    auto loaded = load_authority_file(authority_file);
    if (!loaded) return loaded.error();
    authority = *loaded;
  }
  // Said here, where the file is named, rather than as a link closed by every peer.
  if (own) {
    const Certificate& certificate = own->certificate;
    StaticKey static_key{};
    crypto_scalarmult_base(static_key.data(), own->static_secret.data());
    const uint64_t now = static_cast<uint64_t>(std::time(nullptr));
    if (certificate.not_after < now)
      return make_error(cat("identity file ", identity_file, ": its certificate expired ",
                            (now - certificate.not_after) / 86400,
                            " days ago (renew it: lattice-agentd --certify)"));
    if (authority &&
        !check_certificate(certificate, *authority, certificate.holder, static_key, now))
      return make_error(cat("identity file ", identity_file,
                            " is not certified by the authority of ", authority_file, " (",
                            authority_id(*authority), ")"));
  }
  return Credentials(std::move(key.value()), std::move(own), authority);
}

}  // namespace lattice::secure
