// Secrets kept in files (the cluster key, identity files, the fabric manager's token): opened with
// O_NOFOLLOW and judged on the open file itself (fstat), so a symlink or a swapped file cannot slip
// in between the check and the read. The file must be regular, owned by this user or root, and have
// no group or other access; its bytes go straight into guarded memory.
#pragma once

#include <cstddef>
#include <string>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

struct PrivateFile {
  Secret bytes;  // the file's bytes, then at least one NUL
  size_t size;   // how many bytes the file held
};

// `what` names the file in errors ("key file", "token file"); a file over `max_bytes` is
// refused unread.
Result<PrivateFile> read_private_file(const std::string& path, const char* what, size_t max_bytes);

// Creates `path` with mode 0600 holding `size` bytes; refuses to overwrite anything, and removes
// what it created when a write fails.
Status write_private_file(const std::string& path, const char* what, const uint8_t* bytes,
                          size_t size);

}  // namespace lattice::secure
