// Files the launcher opens for a job (--output, --error, a spawn's hostfile) are opened with the
// job's user's
// rights, as slurmstepd opens them after becoming the user: a launcher running as root
// (lattice-api's role) never lends root's rights to a path the user chose, so a link the user
// planted leads only where the user could go, and no file appears where the user could not
// make one. A launcher that is not root has no rights beyond its own to lend: it opens them as
// itself.
//
// How: for the open alone, the calling thread's supplementary groups and filesystem uid and gid
// (setfsuid, setfsgid) become the user's, by raw system calls. The kernel keeps credentials per
// thread, and only libc's wrappers change every thread's (setgroups) at once; so other threads
// (libcurl's resolver, libuv's pool) keep root's meanwhile, and none of them opens a file for a
// job. An fsuid other than 0 also takes root's filesystem capabilities (CAP_DAC_OVERRIDE, ...)
// away from the thread; they come back with fsuid 0. The open does not wait on a FIFO without a
// reader (it fails instead), so a planted FIFO cannot stall the launcher's loop.
#pragma once

#include <string>

#include "base/result.hpp"
#include "launcher/job_user.hpp"
#include "net/fd.hpp"

namespace lattice::launcher {

// Opens `path` for writing, truncated (or for appending: `append`), created if need be with mode
// 0666 less the umask (srun's default), close-on-exec. Errors name the file, the user when the
// launcher opened it as them, and the reason.
Result<net::UniqueFd> open_output_file(const std::string& path, const JobUserInfo& user,
                                       bool append = false);

// The contents of regular file `path`, read with the same rights, at most `max_bytes` (more is
// an error). The contents appear in no error.
Result<std::string> read_user_file(const std::string& path, const JobUserInfo& user,
                                   size_t max_bytes);

}  // namespace lattice::launcher
