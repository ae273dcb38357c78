// libFuzzer target: the Noise XXpsk0 core (src/secure/noise.hpp). Hostile bytes go to a
// responder as message 1, to an initiator as message 2, or to a responder as message 3 after a
// real exchange. Keys are fixed (docs/protocol.md's `vectors noise` inputs), ephemerals too, so
// the seeds in corpus/noise_handshake (that vector's m1, m2 and m3) pass authentication and
// mutations of them reach every step. Whatever a read accepts must lead on to a whole handshake.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "secure/noise.hpp"
#include "secure/secret.hpp"

// Input: a mode byte, then the message.
//   mode % 3 == 0: the message goes to a fresh responder as m1
//   mode % 3 == 1: an initiator writes m1 (empty payload); the message goes to it as m2
//   mode % 3 == 2: a real m1 and m2 (m2's payload "agent n1"); the message goes to the responder
//                  as m3
namespace {

using namespace lattice::secure;
using namespace lattice::secure::noise;

struct Fixed {
  uint8_t psk[kKeyBytes], i_static[kKeyBytes], i_ephemeral[kKeyBytes], r_static[kKeyBytes],
      r_ephemeral[kKeyBytes];
  Fixed() {
    for (uint8_t i = 0; i < kKeyBytes; ++i) {
      psk[i] = i;
      i_static[i] = static_cast<uint8_t>(0x20 + i);
      i_ephemeral[i] = static_cast<uint8_t>(0x40 + i);
      r_static[i] = static_cast<uint8_t>(0x60 + i);
      r_ephemeral[i] = static_cast<uint8_t>(0x80 + i);
    }
  }
};

const std::string_view kPrologue("LTCSEAL\x01\x03\x03", 10);

void must(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const Fixed keys;
  const unsigned mode = data[0] % 3;
  std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);

  XXpsk0 initiator(XXpsk0::Role::initiator, kPrologue, keys.psk, keys.i_static);
  XXpsk0 responder(XXpsk0::Role::responder, kPrologue, keys.psk, keys.r_static);
  initiator.fix_ephemeral_for_test_vectors(keys.i_ephemeral);
  responder.fix_ephemeral_for_test_vectors(keys.r_ephemeral);
  if (mode == 0) {
    // Accepted: the responder must go on to write m2.
    if (!responder.read_message(message)) return 0;
    auto m2 = responder.write_message("agent n1");
    must(m2.ok());
    must(!responder.complete());
    return 0;
  }
  auto m1 = initiator.write_message("");
  must(m1.ok());
  if (mode == 1) {
    if (!initiator.read_message(message)) return 0;
    auto m3 = initiator.write_message("launcher");
    must(m3.ok() && initiator.complete());
    uint8_t a[kKeyBytes], b[kKeyBytes];
    must(initiator.split(a, b).ok());
    return 0;
  }
  must(responder.read_message(*m1).ok());
  auto m2 = responder.write_message("agent n1");
  must(m2.ok());
  must(initiator.read_message(*m2).ok());
  if (!responder.read_message(message)) {
    must(responder.failed() && !responder.complete());
    return 0;
  }
  must(responder.complete());
  uint8_t a[kKeyBytes], b[kKeyBytes];
  must(responder.split(a, b).ok());
  return 0;
}
