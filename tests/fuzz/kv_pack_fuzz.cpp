// libFuzzer target: packed fence entries as an agent receives them from a peer
// (fence/kv_pack.hpp). Any bytes unpack or are refused, never crash or read past their end;
// what unpacks packs to bytes that unpack to the same entries, in exactly packed_size bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fence/kv_pack.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto entries = lattice::fence::unpack(bytes);
  if (!entries) return 0;
  const size_t packed_size = lattice::fence::packed_size(*entries);
  if (packed_size > size) std::abort();  // minimal lengths never take more bytes
  std::string packed(packed_size, '\0');
  lattice::fence::pack(*entries, packed.data());
  auto again = lattice::fence::unpack(packed);
  if (!again || *again != *entries) std::abort();
  return 0;
}
