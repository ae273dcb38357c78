// The cluster key: loaded through read_private_file (private_file.cpp, which also creates key
// files), and named in logs by a keyed hash.
#include "secure/cluster_key.hpp"

#include <sodium.h>

#include <cstring>

#include "base/strings.hpp"
#include "secure/private_file.hpp"

namespace lattice::secure {

Result<ClusterKey> ClusterKey::load(const std::string& path) {
  auto file = read_private_file(path, "key file", 4096);
  if (!file) return file.error();
  if (file->size != kClusterKeyBytes)
    return make_error(cat("key file ", path, " holds ", file->size, " bytes, not ",
                          kClusterKeyBytes, " (make one with lattice-agentd --generate-key FILE)"));
  ClusterKey key;
  std::memcpy(key.secret_.data(), file->bytes.data(), kClusterKeyBytes);
  return key;
}

ClusterKey ClusterKey::from_bytes(const uint8_t* bytes) {
  ClusterKey key;
  std::memcpy(key.secret_.data(), bytes, kClusterKeyBytes);
  return key;
}

std::string ClusterKey::id() const {
  static const char kLabel[] = "lattice cluster key id";
  uint8_t digest[8];
  crypto_generichash(digest, sizeof digest, reinterpret_cast<const uint8_t*>(kLabel),
                     sizeof kLabel - 1, secret_.data(), kClusterKeyBytes);
  char hex[2 * sizeof digest + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

}  // namespace lattice::secure
