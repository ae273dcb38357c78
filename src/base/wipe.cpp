#include "base/wipe.hpp"

#include <string.h>

namespace lattice {

void wipe_bytes(void* data, size_t size) {
  if (data && size) explicit_bzero(data, size);
}

void wipe(std::string& bytes) { wipe_bytes(bytes.data(), bytes.size()); }

void wipe(std::vector<std::string>& strings) {
  for (auto& s : strings) wipe(s);
}

}  // namespace lattice
