// Handshake 3's payloads and certificates (secure/handshake_payload.hpp, secure/certificate.hpp):
// what a holder of the cluster key may put in M2 and M3. Whatever decodes re-encodes to the
// same bytes, and a decoded certificate can be checked without harm.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "secure/certificate.hpp"
#include "secure/handshake_payload.hpp"

using namespace lattice::secure;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto claim = decode_claim(bytes)) {
    if (encode_claim(*claim) != bytes) std::abort();
    if (auto certificate = decode_certificate(claim->certificate)) {
      if (encode_certificate(*certificate) != claim->certificate) std::abort();
      const CaPublicKey authority{};
      const StaticKey proved{};
      (void)check_certificate(*certificate, authority, claim->identity, proved, 0);
    }
  }
  if (auto payload = decode_responder_payload(bytes))
    if (encode_responder_payload(*payload) != bytes) std::abort();
  if (auto certificate = decode_certificate(bytes))
    if (encode_certificate(*certificate) != bytes) std::abort();
  return 0;
}
