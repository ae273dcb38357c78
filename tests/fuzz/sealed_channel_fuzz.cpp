// libFuzzer target: the sealed link's byte layer (src/secure/channel.hpp). Hostile bytes go to a
// responder's handshake parser, an initiator's M2 parser, or an established responder's record
// reader; and plaintext must come out of seal -> open exactly as it went in, both ways.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "secure/channel.hpp"

// Input: a mode byte, a piece-size byte (0 = deliver at once), then the payload.
//   bit 2 of the mode byte: both sides offer XChaCha20-Poly1305 only (else all this machine
//   runs, so AES-256-GCM where it has AES-NI): each record cipher gets its turn
//   mode % 4 == 0: the payload is what a peer sends a fresh responder (M1, M3, records...)
//   mode % 4 == 1: the payload is what a responder sends a fresh initiator after its M1
//   mode % 4 == 2: after a real handshake and the initiator's valid stream header, the payload
//                  goes to the responder as record bytes
//   mode % 4 == 3: after a real handshake the payload is plaintext; sealed by each side it
//                  must open on the other byte for byte, and the final records must be seen
// The cluster key is fixed; ephemeral keys are random, so records never repeat across runs.
namespace {

using namespace lattice;
using namespace lattice::secure;

const Credentials& fuzz_key() {
  static const Credentials key = [] {
    uint8_t bytes[kClusterKeyBytes];
    std::memset(bytes, 0x5a, sizeof bytes);
    return Credentials(ClusterKey::from_bytes(bytes));
  }();
  return key;
}

Identity launcher() { return {Role::launcher, "fuzz-launcher"}; }
Identity agent() { return {Role::agent, "n1"}; }

// Delivers `bytes` to `channel` in pieces; what it says back, its plaintext, and the first error.
struct Delivery {
  std::string to_network, plaintext;
  bool failed = false;
};

Delivery deliver(Channel& channel, std::string_view bytes, size_t piece) {
  Delivery d;
  do {
    size_t n = piece == 0 ? bytes.size() : std::min(piece, bytes.size());
    ChannelOutput out;
    if (!channel.receive(bytes.substr(0, n), out)) d.failed = true;
    d.to_network += out.to_network;
    d.plaintext += out.plaintext;
    bytes.remove_prefix(n);
  } while (!bytes.empty() && !d.failed);
  return d;
}

// A real handshake in memory; false only if the library refused its own messages.
bool establish(Channel& initiator, Channel& responder) {
  Delivery m2 = deliver(responder, initiator.start(), 0);
  if (m2.failed) return false;
  Delivery m3 = deliver(initiator, m2.to_network, 0);
  if (m3.failed) return false;
  Delivery done = deliver(responder, m3.to_network, 0);
  return !done.failed && initiator.established() && responder.established();
}

void round_trip(Channel& from, Channel& to, std::string_view plaintext, size_t piece) {
  std::string sealed = from.seal(plaintext) + from.seal_final();
  Delivery opened = deliver(to, sealed, piece);
  if (opened.failed || opened.plaintext != plaintext || !to.peer_finished()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const unsigned mode = data[0] % 4;
  const Ciphers ciphers =
      (data[0] & 4) ? static_cast<Ciphers>(Cipher::xchacha20poly1305) : local_ciphers();
  const size_t piece = data[1];
  std::string_view payload(reinterpret_cast<const char*>(data + 2), size - 2);

  Channel initiator(Channel::Side::initiator, fuzz_key(), launcher(), {}, ciphers);
  Channel responder(Channel::Side::responder, fuzz_key(), agent(), {}, ciphers);
  if (mode == 0) {
    deliver(responder, payload, piece);
    return 0;
  }
  if (mode == 1) {
    (void)initiator.start();
    deliver(initiator, payload, piece);
    return 0;
  }
  if (!establish(initiator, responder)) std::abort();
  if (initiator.peer().name != "n1" || responder.peer().name != "fuzz-launcher") std::abort();
  if (initiator.cipher() != responder.cipher()) std::abort();
  if (mode == 2) {
    // The writer's first output is its stream header (if the cipher has one), then one record:
    // keep only the header.
    const size_t header = stream_header_bytes(initiator.cipher());
    std::string first = initiator.seal("x");
    if (first.size() < header) std::abort();
    if (deliver(responder, std::string_view(first).substr(0, header), 0).failed) std::abort();
    deliver(responder, payload, piece);
    return 0;
  }
  round_trip(initiator, responder, payload, piece);
  round_trip(responder, initiator, payload, piece);
  return 0;
}
