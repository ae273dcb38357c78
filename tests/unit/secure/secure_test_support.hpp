// Two channels wired back to back in memory, for handshake and record tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "secure/channel.hpp"

namespace lattice::secure::testing {

// Simple-mode credentials (no identity file, no authority) opening links with `version`.
Credentials key_of(uint8_t fill, uint8_t version = kHandshakeVersion);

// Every record cipher this machine runs (AES-256-GCM needs AES-NI), to run a test under each.
std::vector<Cipher> testable_ciphers();
inline Ciphers only(Cipher c) { return static_cast<Ciphers>(c); }

// Record `n` of a direction under AES-256-GCM, sealed as docs/protocol.md tells it (u32 length |
// flag | ciphertext | tag, the length and flag authenticated), with any flag byte.
std::string gcm_record(const std::string& key, uint64_t n, uint8_t flag, const std::string& plain);

struct Pair {
  Pair(const Credentials& initiator_key, const Credentials& responder_key,
       Identity initiator = {Role::launcher, "launcher@test"},
       Identity responder = {Role::agent, "n1"}, std::shared_ptr<const EphemeralKey> shared = {},
       Ciphers initiator_ciphers = local_ciphers(), Ciphers responder_ciphers = local_ciphers());
  Channel initiator;
  Channel responder;
  std::string to_responder;  // every byte the initiator sent
  std::string to_initiator;  // every byte the responder sent
  std::string initiator_error, responder_error;
  std::string initiator_plain, responder_plain;
  size_t initiator_sent_first = 0;  // M1's size, once handshake() ran

  // Runs the handshake to its end (or a failure); true when both sides are established.
  bool handshake();
  // Delivers bytes to one side, recording what it says back and what fails.
  void deliver_to_responder(const std::string& bytes);
  void deliver_to_initiator(const std::string& bytes);
};

}  // namespace lattice::secure::testing
