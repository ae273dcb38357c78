// The agent's PMI socket directory: one agent per directory (a lock file that names the holder's
// pid), what a crashed predecessor left there removed at start-up, and each launch's private
// subdirectory (0700, owned by the job's user) made and removed. The directory is 0711: other
// users may pass through it to a socket they were given, but not list the launches. Launch
// directories have random names, so nothing others can see (a listing, /proc/net/unix) names a
// launch. Removal never follows links and walks subdirectories only through directory fds: a
// job's user owns its directory and could plant anything in it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/result.hpp"
#include "net/fd.hpp"

namespace lattice::agent {

// The agent's PMIx server files (agent/pmix_host.hpp), inside the socket directory.
inline constexpr const char* kPmixServerDirName = "pmix-server";

// A launch's private directory. The agent makes it as its own and fills it first (sockets,
// host files), then hands it to the job's user: while the agent acts on names in it, nobody
// else can swap one of them for a link. Entries and the directory are given away relative to
// the directory's fd, never by a path that could be redirected.
class LaunchDir {
 public:
  LaunchDir(std::string path, net::UniqueFd fd, uid_t uid, gid_t gid, bool chown)
      : path_(std::move(path)), fd_(std::move(fd)), uid_(uid), gid_(gid), chown_(chown) {}
  const std::string& path() const { return path_; }
  std::string entry(const std::string& name) const { return path_ + "/" + name; }
  // Gives entry `name` (which the agent made here) to the job's user; a no-op unless chown.
  Status give(const std::string& name) const;
  // Gives the directory itself to the job's user: from here on its contents are theirs.
  Status hand_over() const;

 private:
  std::string path_;
  net::UniqueFd fd_;
  uid_t uid_;
  gid_t gid_;
  bool chown_;
};

class SocketDir {
 public:
  // Creates the directory (0711) if needed, or makes an existing one 0711 when it is this
  // process's own (another owner is refused), and takes its lock; an error names the other
  // agent's pid when one holds it.
  static Result<std::unique_ptr<SocketDir>> claim(const std::string& path);
  const std::string& path() const { return path_; }

  // Removes the per-launch directories and PMIx server files a previous agent left behind (we
  // hold the lock, so none is live). Returns how many were removed.
  int remove_leftovers() const;
  // "<dir>/lattice-<random>", 0700 and the agent's until hand_over(), which gives it to
  // uid:gid when `chown` (the agent runs as root).
  Result<LaunchDir> make_launch_dir(uid_t uid, gid_t gid, bool chown) const;

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
