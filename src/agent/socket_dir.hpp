// The agent's PMI socket directory: one agent per directory (a lock file that names the holder's
// pid), what a crashed predecessor left there removed at start-up, and each launch's private
// subdirectory (0700, owned by the job's user) made and removed. Removal never follows links
// and walks subdirectories only through directory fds: a job's user owns its directory and
// could plant anything in it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/result.hpp"
#include "net/fd.hpp"

namespace lattice::agent {

// The agent's PMIx server files (agent/pmix_host.hpp), inside the socket directory.
inline constexpr const char* kPmixServerDirName = "pmix-server";

class SocketDir {
 public:
  // Creates the directory (0755) if needed and takes its lock; an error names the other
  // agent's pid when one holds it.
  static Result<std::unique_ptr<SocketDir>> claim(const std::string& path);
  const std::string& path() const { return path_; }

  // Removes the per-launch directories and PMIx server files a previous agent left behind (we
  // hold the lock, so none is live). Returns how many were removed.
  int remove_leftovers() const;
  // "<dir>/lattice-<id>", 0700, owned by uid:gid when `chown` (the agent runs as root).
  Result<std::string> make_launch_dir(const std::string& launch_id, uid_t uid, gid_t gid,
                                      bool chown) const;

 private:
  SocketDir(std::string path, net::UniqueFd lock)
      : path_(std::move(path)), lock_(std::move(lock)) {}
  std::string path_;
  net::UniqueFd lock_;  // flock held while open
};

// Removes a launch directory and everything in it (Open MPI's session tree included), never
// following a link. False when something was left (logged).
bool remove_launch_dir(const std::string& dir);

}  // namespace lattice::agent
