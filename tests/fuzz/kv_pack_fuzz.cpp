// libFuzzer target: packed fence entries as an agent receives them from a peer
// (fence/kv_pack.hpp). Any bytes are counted or refused, never crash or read past their end;
// what is accepted views as exactly that many entries, which pack to bytes that view the same,
// in exactly packed_size bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fence/kv_pack.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto count = lattice::fence::count_packed(bytes);
  if (!count) return 0;
  std::vector<lattice::KvView> entries;
  lattice::fence::view_packed(bytes, entries);
  if (entries.size() != *count) std::abort();
  const size_t packed_size = lattice::fence::packed_size(entries);
  if (packed_size > size) std::abort();  // minimal lengths never take more bytes
  std::string packed(packed_size, '\0');
  lattice::fence::pack(entries, packed.data());
  std::vector<lattice::KvView> again;
  auto recount = lattice::fence::count_packed(packed);
  if (!recount || *recount != *count) std::abort();
  lattice::fence::view_packed(packed, again);
  if (again != entries) std::abort();
  return 0;
}
