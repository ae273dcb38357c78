#include "secure_test_support.hpp"

#include <sodium.h>

#include <cstring>

namespace lattice::secure::testing {

Credentials key_of(uint8_t fill, uint8_t version) {
  uint8_t bytes[kClusterKeyBytes];
  std::memset(bytes, fill, sizeof bytes);
  Credentials credentials(ClusterKey::from_bytes(bytes));
  credentials.initiate_version = version;
  return credentials;
}

std::vector<Cipher> testable_ciphers() {
  std::vector<Cipher> out{Cipher::xchacha20poly1305};
  if (local_ciphers() & only(Cipher::aes256gcm)) out.push_back(Cipher::aes256gcm);
  return out;
}

Pair::Pair(const Credentials& initiator_key, const Credentials& responder_key, Identity i,
           Identity r, std::shared_ptr<const EphemeralKey> shared, Ciphers initiator_ciphers,
           Ciphers responder_ciphers)
    : initiator(Channel::Side::initiator, initiator_key, std::move(i), std::move(shared),
                initiator_ciphers),
      responder(Channel::Side::responder, responder_key, std::move(r), {}, responder_ciphers) {}

void Pair::deliver_to_responder(const std::string& bytes) {
  ChannelOutput out;
  auto st = responder.receive(bytes, out);
  if (!st) responder_error = st.error().message;
  responder_plain += out.plaintext;
  if (!out.to_network.empty()) {
    to_initiator += out.to_network;
    deliver_to_initiator(out.to_network);
  }
}

void Pair::deliver_to_initiator(const std::string& bytes) {
  ChannelOutput out;
  auto st = initiator.receive(bytes, out);
  if (!st) initiator_error = st.error().message;
  initiator_plain += out.plaintext;
  if (!out.to_network.empty()) {
    to_responder += out.to_network;
    deliver_to_responder(out.to_network);
  }
}

bool Pair::handshake() {
  std::string m1 = initiator.start();
  initiator_sent_first = m1.size();
  to_responder += m1;
  deliver_to_responder(m1);
  return initiator.established() && responder.established();
}

std::string gcm_record(const std::string& key, uint64_t n, uint8_t flag, const std::string& plain) {
  uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES] = {};  // n, big-endian in the last 8 bytes
  for (int i = 0; i < 8; ++i) nonce[sizeof nonce - 1 - i] = static_cast<uint8_t>(n >> (8 * i));
  std::string record(4 + 1 + plain.size() + crypto_aead_aes256gcm_ABYTES, '\0');
  const size_t sealed = record.size() - 4;
  for (int i = 0; i < 4; ++i) record[i] = static_cast<char>(sealed >> (8 * (3 - i)));
  record[4] = static_cast<char>(flag);
  auto* out = reinterpret_cast<uint8_t*>(record.data());
  crypto_aead_aes256gcm_encrypt_detached(
      out + 5, out + 5 + plain.size(), nullptr, reinterpret_cast<const uint8_t*>(plain.data()),
      plain.size(), out, 5, nullptr, nonce, reinterpret_cast<const uint8_t*>(key.data()));
  return record;
}

}  // namespace lattice::secure::testing
