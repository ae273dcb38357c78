// The fabric manager's bearer token, read like the cluster key (secure/private_file.hpp: owner
// only, into guarded memory), NUL-terminated for libcurl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::fabric {

// Longest token accepted (a JWT of a few claims is well under this).
inline constexpr size_t kMaxTokenBytes = 8192;

// One line of printable ASCII without spaces (it goes into an HTTP header); trailing newlines
// are dropped. The Secret holds the token, then NULs.
Result<secure::Secret> read_token_file(const std::string& path);

// "Authorization: Bearer TOKEN", NUL-terminated, in guarded memory: the one form of the token
// the fabric client keeps (`token` as read_token_file gives it).
secure::Secret authorization_header(const secure::Secret& token);

// The checks alone, over bytes (for the tests): the token's length, or why it is refused.
Result<size_t> token_length(const uint8_t* bytes, size_t size);

}  // namespace lattice::fabric
