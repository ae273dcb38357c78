// libFuzzer target: the fabric manager's answers (fabric/cxi_json.hpp). Any body must decode or
// be refused, never crash; what is accepted keeps the codec's promises: a service id safe for a
// URL path, a key of 1..kMaxAuthKeyBytes bytes, an error text of printable ASCII, 200 at most.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fabric/cxi_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice::fabric;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  if (auto service = decode_service_created(body)) {
    if (service->id.empty() || service->id.size() > kMaxServiceIdLength) std::abort();
    for (char c : service->id)
      if (c == '/' || c == '?' || c == '#' || c == '%' || c <= ' ' || c > '~') std::abort();
  }
  if (auto key = decode_auth_key(body))
    if (key->size() == 0 || key->size() > kMaxAuthKeyBytes) std::abort();
  std::string text = error_text(body);
  if (text.size() > 200) std::abort();
  for (char c : text)
    if (c < ' ' || c > '~') std::abort();
  return 0;
}
