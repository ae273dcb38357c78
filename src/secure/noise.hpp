// The Noise handshake Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b (Noise spec revision 34), the core of
// handshake version 3:
//   -> psk, e
//   <- e, ee, s, es
//   -> s, se
// Both sides prove the pre-shared key from the first message on, learn each other's static key
// under encryption, and end with two traffic keys bound to the whole transcript. Pure: bytes in,
// bytes out; the caller frames, moves and bounds the messages. docs/protocol.md has a vector
// made by an independent implementation (npm noise-handshake).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::secure::noise {

constexpr size_t kKeyBytes = 32, kHashBytes = 64, kTagBytes = 16;
constexpr std::string_view kProtocolName = "Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b";
// Noise's limit on one message; longer ones are refused both ways.
constexpr size_t kMaxMessageBytes = 65535;
// The size of each message with an empty payload (add the payload's length).
constexpr size_t kMessage1Bytes = kKeyBytes + kTagBytes;                          // e, payload
constexpr size_t kMessage2Bytes = kKeyBytes + kKeyBytes + kTagBytes + kTagBytes;  // e, s, payload
constexpr size_t kMessage3Bytes = kKeyBytes + kTagBytes + kTagBytes;              // s, payload

// Public key of an X25519 secret (crypto_scalarmult_base).
std::array<uint8_t, kKeyBytes> public_key_of(const uint8_t secret[kKeyBytes]);

class XXpsk0 {
 public:
  enum class Role { initiator, responder };
  // static_secret: this side's static X25519 secret key; psk: 32 bytes. Both are copied into
  // guarded memory. The ephemeral key pair is made here (random).
  // `static_public`, when given, is static_secret's public key, computed once by the owner (a
  // base-point multiplication per handshake saved).
  XXpsk0(Role role, std::string_view prologue, const uint8_t psk[kKeyBytes],
         const uint8_t static_secret[kKeyBytes], const uint8_t* static_public = nullptr);
  ~XXpsk0();
  // Not movable: a moved-from Secret has no memory (hold one in a unique_ptr or optional).
  XXpsk0(const XXpsk0&) = delete;
  XXpsk0& operator=(const XXpsk0&) = delete;

  // Test vectors only: this ephemeral secret instead of the random one. Ignored after the first
  // message. A fixed ephemeral repeats keys across handshakes: production never calls this.
  void fix_ephemeral_for_test_vectors(const uint8_t secret[kKeyBytes]);

  // The next message of the pattern, carrying `payload` (encrypted; the caller bounds it). An
  // error, and nothing changes, when it is not this side's turn to write, the handshake is over
  // or failed, or the message would pass kMaxMessageBytes.
  Result<std::string> write_message(std::string_view payload);
  // Reads the peer's next message; returns its payload. An error (the text says why: "the
  // message is N bytes, too short", "the peer's proof does not verify", "unusable key") when it
  // is malformed or does not authenticate: the object is then failed for good and its secrets
  // are wiped. Called out of turn (or after the end), an error that changes nothing.
  Result<std::string> read_message(std::string_view message);

  bool complete() const { return step_ == kDone; }
  bool failed() const { return failed_; }
  // The peer's static public key: valid once its `s` was read (message 2 for the initiator,
  // message 3 for the responder), zeros before.
  std::array<uint8_t, kKeyBytes> remote_static() const { return remote_static_; }
  // Noise's h: the same on both sides once complete (a channel binding).
  std::array<uint8_t, kHashBytes> handshake_hash() const { return h_; }
  // Once complete: Split()'s two keys (the first 32 bytes of each HKDF output), initiator ->
  // responder and responder -> initiator, into caller-owned 32-byte buffers (the caller's
  // Secret). Wipes the handshake's last secret (the chaining key), so it works once; otherwise
  // (not complete, failed, already split) an error, and both buffers are zeroed.
  Status split(uint8_t initiator_to_responder[kKeyBytes],
               uint8_t responder_to_initiator[kKeyBytes]);

 private:
  static constexpr int kDone = 3;  // messages 0, 1, 2 are steps 0..2

  struct Keys;
  Keys& keys();
  bool my_turn_to_write() const;
  Error fail(Error error);
  void mix_hash(const uint8_t* data, size_t size);
  void mix_key(const uint8_t* input, size_t size);
  void mix_key_and_hash(const uint8_t* input, size_t size);
  Status mix_dh(const uint8_t* local_secret, const uint8_t* remote_public);
  void encrypt_and_hash(std::string_view plain, std::string& out);
  Result<std::string> decrypt_and_hash(std::string_view sealed);
  void write_e(std::string& out);
  void read_e(const uint8_t* remote);
  void finish();

  Role role_;
  int step_ = 0;
  bool failed_ = false;
  bool split_done_ = false;
  bool has_key_ = false;  // Noise's k is set (from the psk token on, always)
  uint64_t nonce_ = 0;    // Noise's n
  Secret secret_;         // s, e, ck, k, psk and the stashed ee (Keys in noise.cpp)
  std::array<uint8_t, kKeyBytes> static_public_{};
  std::array<uint8_t, kKeyBytes> ephemeral_public_{};
  std::array<uint8_t, kKeyBytes> remote_ephemeral_{};
  std::array<uint8_t, kKeyBytes> remote_static_{};
  std::array<uint8_t, kHashBytes> h_{};
};

}  // namespace lattice::secure::noise
