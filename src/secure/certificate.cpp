#include "secure/certificate.hpp"

#include <sodium.h>

#include <cstring>

#include "base/strings.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {
namespace {

void append_be64(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((value >> shift) & 0xff));
}

uint64_t read_be64(const char* p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | static_cast<uint8_t>(p[i]);
  return value;
}

std::string hex(const uint8_t* bytes, size_t size) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes), size));
}

}  // namespace

std::string certificate_body(const Certificate& certificate) {
  std::string out(kCertificateMagic);
  out.push_back(static_cast<char>(certificate.signing_key ? kSigningCertificateVersion
                                                          : kCertificateVersion));
  out += encode_identity(certificate.holder);
  out.append(reinterpret_cast<const char*>(certificate.static_key.data()), kStaticKeyBytes);
  if (certificate.signing_key)
    out.append(reinterpret_cast<const char*>(certificate.signing_key->data()), kSigningKeyBytes);
  append_be64(out, certificate.not_after);
  return out;
}

std::string encode_certificate(const Certificate& certificate) {
  std::string out = certificate_body(certificate);
  out.append(reinterpret_cast<const char*>(certificate.signature.data()), kCaSignatureBytes);
  return out;
}

Result<Certificate> decode_certificate(std::string_view bytes) {
  constexpr size_t kHeader = kCertificateMagic.size() + 3;  // magic, version, role, name length
  constexpr size_t kFixed = kHeader + kStaticKeyBytes + 8 + kCaSignatureBytes;
  if (bytes.size() < kFixed + 1 || bytes.size() > kMaxCertificate)
    return make_error(cat("a certificate of ", bytes.size(), " bytes"));
  if (bytes.substr(0, kCertificateMagic.size()) != kCertificateMagic)
    return make_error("not a Lattice certificate (its magic differs)");
  const auto version = static_cast<uint8_t>(bytes[kCertificateMagic.size()]);
  if (version != kCertificateVersion && version != kSigningCertificateVersion)
    return make_error(cat("a certificate of version ", int(version), ", which this release (",
                          "versions ", int(kCertificateVersion), " and ",
                          int(kSigningCertificateVersion), ") does not read"));
  const bool signing = version == kSigningCertificateVersion;
  size_t name_length = static_cast<uint8_t>(bytes[kHeader - 1]);
  if (bytes.size() != kFixed + name_length + (signing ? kSigningKeyBytes : 0))
    return make_error(cat("a certificate of ", bytes.size(), " bytes naming ", name_length,
                          " bytes: its lengths disagree"));
  auto holder = decode_identity(bytes.substr(kHeader - 2, 2 + name_length));
  if (!holder) return make_error("a certificate whose holder is malformed");
  Certificate certificate;
  certificate.holder = std::move(*holder);
  const char* p = bytes.data() + kHeader + name_length;
  std::memcpy(certificate.static_key.data(), p, kStaticKeyBytes);
  p += kStaticKeyBytes;
  if (signing) {
    certificate.signing_key.emplace();
    std::memcpy(certificate.signing_key->data(), p, kSigningKeyBytes);
    p += kSigningKeyBytes;
  }
  certificate.not_after = read_be64(p);
  std::memcpy(certificate.signature.data(), p + 8, kCaSignatureBytes);
  return certificate;
}

void sign_certificate(Certificate& certificate, const uint8_t ca_secret[64]) {
  std::string body = certificate_body(certificate);
  crypto_sign_detached(certificate.signature.data(), nullptr,
                       reinterpret_cast<const uint8_t*>(body.data()), body.size(), ca_secret);
}

Status check_certified(const Certificate& certificate, const CaPublicKey& ca,
                       const Identity& claimed, uint64_t now) {
  std::string body = certificate_body(certificate);
  if (crypto_sign_verify_detached(certificate.signature.data(),
                                  reinterpret_cast<const uint8_t*>(body.data()), body.size(),
                                  ca.data()) != 0)
    return make_error(
        cat("its certificate is not signed by this side's authority ", authority_id(ca)));
  if (certificate.holder.role != claimed.role || certificate.holder.name != claimed.name)
    return make_error(cat("it claims to be ", describe(claimed), " but its certificate is for ",
                          describe(certificate.holder)));
  if (certificate.not_after < now)
    return make_error(cat("its certificate expired ", now - certificate.not_after,
                          " seconds ago (renew it: lattice-agentd --certify)"));
  return {};
}

Status check_certificate(const Certificate& certificate, const CaPublicKey& ca,
                         const Identity& claimed, const StaticKey& static_key, uint64_t now) {
  if (auto certified = check_certified(certificate, ca, claimed, now); !certified) return certified;
  if (!equal(certificate.static_key.data(), static_key.data(), kStaticKeyBytes))
    return make_error(cat("its certificate is for static key ",
                          hex(certificate.static_key.data(), 8), "..., the link proved ",
                          hex(static_key.data(), 8), "..."));
  return {};
}

std::string authority_id(const CaPublicKey& ca) { return hex(ca.data(), 8); }

}  // namespace lattice::secure
