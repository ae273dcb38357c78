#include "secure_test_support.hpp"

#include <cstring>

namespace lattice::secure::testing {

ClusterKey key_of(uint8_t fill) {
  uint8_t bytes[kClusterKeyBytes];
  std::memset(bytes, fill, sizeof bytes);
  return ClusterKey::from_bytes(bytes);
}

std::vector<Cipher> testable_ciphers() {
  std::vector<Cipher> out{Cipher::xchacha20poly1305};
  if (local_ciphers() & only(Cipher::aes256gcm)) out.push_back(Cipher::aes256gcm);
  return out;
}

Pair::Pair(const ClusterKey& initiator_key, const ClusterKey& responder_key, Identity i, Identity r,
           std::shared_ptr<const EphemeralKey> shared, Ciphers initiator_ciphers,
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
  to_responder += m1;
  deliver_to_responder(m1);
  return initiator.established() && responder.established();
}

}  // namespace lattice::secure::testing
