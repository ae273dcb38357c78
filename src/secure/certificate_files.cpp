#include "secure/certificate_files.hpp"

#include <sodium.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "base/strings.hpp"
#include "secure/private_file.hpp"

namespace lattice::secure {
namespace {

constexpr size_t kCaSecretBytes = crypto_sign_SECRETKEYBYTES;
static_assert(crypto_sign_PUBLICKEYBYTES == kCaPublicKeyBytes);
static_assert(crypto_scalarmult_BYTES == kStaticKeyBytes);
static_assert(crypto_sign_SEEDBYTES == kSigningSeedBytes);
static_assert(crypto_sign_SECRETKEYBYTES == kSigningSecretBytes);
static_assert(crypto_sign_PUBLICKEYBYTES == kSigningKeyBytes);

}  // namespace

Result<OwnIdentity> load_identity_file(const std::string& path) {
  constexpr size_t kHeader = kIdentityFileMagic.size() + 1;
  constexpr size_t kMaxFile = kHeader + kStaticKeyBytes + kSigningSeedBytes + kMaxCertificate;
  auto file = read_private_file(path, "identity file", kMaxFile);
  if (!file) return file.error();
  std::string_view bytes(reinterpret_cast<const char*>(file->bytes.data()), file->size);
  const uint8_t version = bytes.size() > kHeader ? static_cast<uint8_t>(bytes[kHeader - 1]) : 0;
  const bool signing = version == kSigningCertificateVersion;
  if (bytes.size() < kHeader + kStaticKeyBytes + (signing ? kSigningSeedBytes : 0) ||
      bytes.substr(0, kIdentityFileMagic.size()) != kIdentityFileMagic ||
      (version != kCertificateVersion && !signing))
    return make_error(cat("identity file ", path,
                          " is not a Lattice identity (make one with lattice-agentd --certify)"));
  bytes.remove_prefix(kHeader);
  OwnIdentity own;
  std::memcpy(own.static_secret.data(), bytes.data(), kStaticKeyBytes);
  bytes.remove_prefix(kStaticKeyBytes);
  SigningKey signing_public{};
  if (signing) {
    own.signing_secret.emplace(kSigningSecretBytes);
    crypto_sign_seed_keypair(signing_public.data(), own.signing_secret->data(),
                             reinterpret_cast<const uint8_t*>(bytes.data()));
    bytes.remove_prefix(kSigningSeedBytes);
  }
  auto certificate = decode_certificate(bytes);
  if (!certificate)
    return make_error(cat("identity file ", path, ": ", certificate.error().message));
  StaticKey public_key{};
  crypto_scalarmult_base(public_key.data(), own.static_secret.data());
  if (!equal(public_key.data(), certificate->static_key.data(), kStaticKeyBytes))
    return make_error(cat("identity file ", path, ": its certificate is for another static key"));
  if (signing != certificate->signing_key.has_value() ||
      (signing &&
       !equal(signing_public.data(), certificate->signing_key->data(), kSigningKeyBytes)))
    return make_error(cat("identity file ", path, ": its certificate is for another signing key"));
  own.certificate = std::move(*certificate);
  own.certificate_bytes = std::string(bytes);
  return own;
}

Result<CaPublicKey> load_authority_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(cat("cannot read authority file ", path, ": ", std::strerror(errno)));
  // One hex line; a comment line may name the authority. Read at most 4 KiB of it.
  constexpr size_t kMaxAuthorityFile = 4096;
  std::string text(kMaxAuthorityFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxAuthorityFile)
    return make_error(cat("authority file ", path, " holds more than ", kMaxAuthorityFile,
                          " bytes: not an authority's public key"));
  std::istringstream lines(text);
  std::string line;
  std::string found;
  while (std::getline(lines, line) && found.empty()) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    found = line;
  }
  auto bytes = from_hex(found);
  if (!bytes || bytes->size() != kCaPublicKeyBytes)
    return make_error(cat("authority file ", path, " does not hold one key of ",
                          2 * kCaPublicKeyBytes,
                          " hex digits (lattice-agentd --generate-ca FILE writes FILE.pub)"));
  CaPublicKey key{};
  std::memcpy(key.data(), bytes->data(), kCaPublicKeyBytes);
  return key;
}

Status generate_authority_files(const std::string& secret_path) {
  if (!initialize()) return make_error("libsodium cannot initialise");
  Secret secret(kCaSecretBytes);
  CaPublicKey public_key{};
  crypto_sign_keypair(public_key.data(), secret.data());
  const std::string public_path = secret_path + ".pub";
  std::string text = cat(
      "# lattice certificate authority ", authority_id(public_key), "\n",
      to_hex(std::string_view(reinterpret_cast<const char*>(public_key.data()), public_key.size())),
      "\n");
  // The public half first: a failure then leaves no secret without its public key.
  std::ofstream probe(public_path, std::ios::in);
  if (probe) return make_error(cat(public_path, " already exists: refusing to overwrite it"));
  if (auto made =
          write_private_file(secret_path, "authority key file", secret.data(), secret.size());
      !made)
    return made;
  std::ofstream out(public_path, std::ios::out | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return make_error(cat("cannot write ", public_path, ": ", std::strerror(errno)));
  return {};
}

Result<Certificate> certify_identity(const std::string& ca_secret_path, const Identity& holder,
                                     uint64_t days, uint64_t now, const std::string& out_path) {
  auto ca = read_private_file(ca_secret_path, "authority key file", 4096);
  if (!ca) return ca.error();
  if (ca->size != kCaSecretBytes)
    return make_error(cat("authority key file ", ca_secret_path, " holds ", ca->size,
                          " bytes, not ", kCaSecretBytes,
                          " (lattice-agentd --generate-ca FILE makes one)"));
  if (!valid_identity_name(holder.name))
    return make_error(cat("'", holder.name, "' cannot be certified: a name is 1 to ",
                          kMaxIdentityName, " printable bytes without spaces"));
  // Launchers sign the relayed launches they start; agents sign nothing.
  const bool signing = holder.role == Role::launcher;
  const size_t header =
      kIdentityFileMagic.size() + 1 + kStaticKeyBytes + (signing ? kSigningSeedBytes : 0);
  Secret file(header + kMaxCertificate);
  std::memcpy(file.data(), kIdentityFileMagic.data(), kIdentityFileMagic.size());
  file.data()[kIdentityFileMagic.size()] =
      signing ? kSigningCertificateVersion : kCertificateVersion;
  uint8_t* static_secret = file.data() + kIdentityFileMagic.size() + 1;
  randombytes_buf(static_secret, kStaticKeyBytes);
  Certificate certificate;
  certificate.holder = holder;
  crypto_scalarmult_base(certificate.static_key.data(), static_secret);
  if (signing) {
    uint8_t* seed = static_secret + kStaticKeyBytes;
    randombytes_buf(seed, kSigningSeedBytes);
    Secret secret(kSigningSecretBytes);
    certificate.signing_key.emplace();
    crypto_sign_seed_keypair(certificate.signing_key->data(), secret.data(), seed);
  }
  certificate.not_after = now + days * 86400;
  sign_certificate(certificate, ca->bytes.data());
  const std::string bytes = encode_certificate(certificate);
  std::memcpy(file.data() + header, bytes.data(), bytes.size());
  if (auto written =
          write_private_file(out_path, "identity file", file.data(), header + bytes.size());
      !written)
    return written.error();
  return certificate;
}

}  // namespace lattice::secure
