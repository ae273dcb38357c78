// libFuzzer target: the bytes a PMIx client sends first, as the agent's PMIx door reads them
// before anything reaches libpmix (pmix/client_hello.hpp, pmix/admission.hpp). Any bytes must
// decode or be refused, never crash or read past what arrived; a decoded handshake is judged
// without crashing, and what is admitted really is a registered rank claiming its own user.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pmix/admission.hpp"
#include "pmix/client_hello.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice::pmix;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() < kHelloHeaderBytes) return 0;
  auto total = hello_size(bytes.substr(0, kHelloHeaderBytes));
  if (!total) return 0;
  if (*total > kMaxHelloBytes) std::abort();
  // The door decodes exactly what the header announced, once it has all arrived.
  auto hello = decode_hello(bytes.substr(0, std::min(*total, bytes.size())));
  if (!hello) return 0;
  if (bytes.size() < *total || hello->flag != kSimpleClient) std::abort();
  static const Registry registry = {{"lattice.test-ns", {1001, 1002, {0, 3}}}};
  for (uint32_t uid : {0u, 1001u, 1002u}) {
    if (!admit(*hello, uid, registry)) continue;
    auto claimed = native_credential(hello->credential);
    if (!claimed || claimed->uid != 1001 || claimed->gid != 1002 || uid == 1002 ||
        hello->nspace != "lattice.test-ns" || (hello->rank != 0 && hello->rank != 3))
      std::abort();
  }
  return 0;
}
