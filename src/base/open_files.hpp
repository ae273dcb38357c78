// How many descriptors this process may hold. A login shell's soft limit (often 1024) is far
// below what a launcher of a thousand nodes needs (a link each), or an agent of a few hundred
// ranks (pipes, a PMI socket and a pidfd each), while the hard limit is usually ample.
#pragma once

#include <cstddef>

namespace lattice {

// Descriptors a process keeps besides those a launch's size asks for (standard streams, the
// loop's, log and config files), in the estimates both mains check against the limit.
constexpr size_t kOwnOpenFiles = 64;

// Raises the soft RLIMIT_NOFILE to the hard one, as srun does (call once, early in main).
// Returns the limit in force afterwards.
size_t raise_open_files_limit();

}  // namespace lattice
