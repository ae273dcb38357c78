#include "secure/handshake_payload.hpp"

#include "secure/certificate.hpp"

namespace lattice::secure {

std::string encode_claim(const Claim& claim) {
  std::string out = encode_identity(claim.identity);
  out.push_back(static_cast<char>((claim.certificate.size() >> 8) & 0xff));
  out.push_back(static_cast<char>(claim.certificate.size() & 0xff));
  return out + claim.certificate;
}

std::optional<Claim> decode_claim(std::string_view bytes) {
  if (bytes.size() < 2) return std::nullopt;
  const size_t name = static_cast<uint8_t>(bytes[1]);
  if (bytes.size() < 2 + name + 2) return std::nullopt;
  auto identity = decode_identity(bytes.substr(0, 2 + name));
  if (!identity) return std::nullopt;
  const size_t length = static_cast<size_t>(static_cast<uint8_t>(bytes[2 + name]) << 8 |
                                            static_cast<uint8_t>(bytes[3 + name]));
  if (length > kMaxCertificate || bytes.size() != 4 + name + length) return std::nullopt;
  return Claim{std::move(*identity), std::string(bytes.substr(4 + name))};
}

std::string encode_responder_payload(const ResponderPayload& payload) {
  std::string out{static_cast<char>(payload.ciphers), static_cast<char>(payload.flags)};
  return out + encode_claim(payload.claim);
}

std::optional<ResponderPayload> decode_responder_payload(std::string_view bytes) {
  if (bytes.size() < 2) return std::nullopt;
  auto claim = decode_claim(bytes.substr(2));
  if (!claim) return std::nullopt;
  return ResponderPayload{static_cast<Ciphers>(bytes[0]), static_cast<uint8_t>(bytes[1]),
                          std::move(*claim)};
}

}  // namespace lattice::secure
