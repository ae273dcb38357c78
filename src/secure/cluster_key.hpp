// The cluster key: 32 random bytes in a file, shared by every agent and launcher of a cluster.
// It authenticates links (handshake.hpp) and never leaves guarded memory. A key file must be a
// regular file of exactly 32 bytes, owned by this user or root, with no group/other access.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

constexpr size_t kClusterKeyBytes = 32;

class ClusterKey {
 public:
  // Reads and checks a key file; errors name the file and what to do about it.
  static Result<ClusterKey> load(const std::string& path);
  // For tests and fuzzing: a key from given bytes (exactly kClusterKeyBytes).
  static ClusterKey from_bytes(const uint8_t* bytes);

  const uint8_t* data() const { return secret_.data(); }
  // A short public name for the key (hex of a keyed hash), for logs: two hosts with different
  // ids hold different keys. Reveals nothing about the key.
  std::string id() const;

 private:
  ClusterKey() : secret_(kClusterKeyBytes) {}
  Secret secret_;
};

// Writes a new random key to `path` with mode 0600; refuses to overwrite anything.
Status generate_key_file(const std::string& path);

}  // namespace lattice::secure
