// Handshake 3's payloads (docs/protocol.md, "Version 3: Noise"), as a pure codec. They arrive
// encrypted and authenticated by the cluster key, but a key holder may send anything: every
// length is checked before it is used.
//   M2: ciphers (1) | flags (1) | claim
//   M3: claim
//   claim = identity (role | n | name) | u16 big-endian certificate length | certificate
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "secure/identity.hpp"
#include "secure/record.hpp"

namespace lattice::secure {

// M2's flag: the responder takes identities only with a certificate.
constexpr uint8_t kRequiresCertificate = 0x01;

struct Claim {
  Identity identity;
  std::string certificate;  // empty: none
};

struct ResponderPayload {
  Ciphers ciphers = 0;
  uint8_t flags = 0;
  Claim claim;
};

std::string encode_claim(const Claim& claim);
std::optional<Claim> decode_claim(std::string_view bytes);
std::string encode_responder_payload(const ResponderPayload& payload);
std::optional<ResponderPayload> decode_responder_payload(std::string_view bytes);

}  // namespace lattice::secure
