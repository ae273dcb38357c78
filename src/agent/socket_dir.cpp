#include "agent/socket_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "secure/secret.hpp"

namespace lattice::agent {
namespace {

constexpr const char* kLockName = "agentd.lock";
constexpr const char* kLaunchPrefix = "lattice-";
// Others may traverse the socket directory (to a socket they were given) but not list it.
constexpr mode_t kSocketDirMode = 0711;
// Random bytes in a launch directory's name: unguessable, and unrelated to the launch's id.
constexpr size_t kLaunchDirNameBytes = 16;

// Open MPI's session tree inside a launch directory is a few levels deep; deeper is someone's
// mischief, and what lies below this is left (and said) rather than chased.
constexpr int kMaxRemoveDepth = 16;

std::string why() { return std::strerror(errno); }

// Empties the directory open as `dfd`: every step is relative to a directory fd and opens
// subdirectories with O_NOFOLLOW, so nothing the job's user plants (links included) leads it
// outside. Names are read first, then removed, so the listing is never walked while it changes.
void remove_entries(int dfd, int depth) {
  int listing = ::dup(dfd);
  if (listing < 0) return;
  DIR* d = ::fdopendir(listing);  // owns `listing` now
  if (!d) {
    ::close(listing);
    return;
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  for (const auto& name : names) {
    if (::unlinkat(dfd, name.c_str(), 0) == 0 || errno != EISDIR) continue;
    if (depth > 0) {
      int sub = ::openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        remove_entries(sub, depth - 1);
        ::close(sub);
      }
    }
    ::unlinkat(dfd, name.c_str(), AT_REMOVEDIR);
  }
}

}  // namespace

Status LaunchDir::give(const std::string& name) const {
  if (chown_ && ::fchownat(fd_.get(), name.c_str(), uid_, gid_, AT_SYMLINK_NOFOLLOW) != 0)
    return make_error(cat("cannot give ", entry(name), " to uid ", uid_, ": ", why()));
  return {};
}

Status LaunchDir::hand_over() const {
  if (chown_ && ::fchown(fd_.get(), uid_, gid_) != 0)
    return make_error(cat("cannot give ", path_, " to uid ", uid_, ": ", why()));
  return {};
}

Result<std::unique_ptr<SocketDir>> SocketDir::claim(const std::string& path) {
  if (::mkdir(path.c_str(), kSocketDirMode) != 0 && errno != EEXIST)
    return make_error(cat("cannot create PMI socket directory ", path, ": ", why()));
  net::UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0)
    return make_error(cat("cannot open PMI socket directory ", path, ": ", why()));
  // Launch directories are made in it by name: whoever owns it could rename them under us.
  if (st.st_uid != ::geteuid())
    return make_error(cat("PMI socket directory ", path, " belongs to uid ", st.st_uid,
                          ", not to this agent's uid ", ::geteuid()));
  if ((st.st_mode & 07777) != kSocketDirMode && ::fchmod(dir.get(), kSocketDirMode) != 0)
    return make_error(cat("cannot make PMI socket directory ", path, " mode 0711: ", why()));
  std::string lock_path = cat(path, '/', kLockName);
  net::UniqueFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return make_error(cat("cannot open ", lock_path, ": ", why()));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return make_error(cat("cannot lock ", lock_path, ": ", why()));
    char pid[32] = {};
    ssize_t n = ::pread(fd.get(), pid, sizeof pid - 1, 0);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "unknown";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return make_error(cat("PMI socket directory ", path,
                          " is in use by another lattice-agentd (pid ", holder,
                          "); give each agent its own pmi.socket_dir"));
  }
  std::string mine = cat(::getpid(), '\n');
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), mine.data(), mine.size(), 0) < 0)
    return make_error(cat("cannot write ", lock_path, ": ", why()));
  return std::unique_ptr<SocketDir>(new SocketDir(path, std::move(fd)));
}

int SocketDir::remove_leftovers() const {
  int removed = 0;
  DIR* d = ::opendir(path_.c_str());
  if (!d) return 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!starts_with(name, kLaunchPrefix) && name != kPmixServerDirName) continue;
    std::string full = cat(path_, '/', name);
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) continue;
    LAT_LOG(info, "agent", "removing ", full, ", left by an agent that did not end cleanly");
    if (S_ISDIR(st.st_mode) ? remove_launch_dir(full) : ::unlink(full.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

Result<LaunchDir> SocketDir::make_launch_dir(uid_t uid, gid_t gid, bool chown) const {
  unsigned char random[kLaunchDirNameBytes];
  secure::random_bytes(random, sizeof random);
  std::string dir = cat(path_, '/', kLaunchPrefix,
                        to_hex(std::string_view(reinterpret_cast<char*>(random), sizeof random)));
  if (::mkdir(dir.c_str(), 0700) != 0) return make_error(cat("cannot create ", dir, ": ", why()));
  net::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    std::string error = cat("cannot open ", dir, ": ", why());
    ::rmdir(dir.c_str());
    return make_error(error);
  }
  return LaunchDir(std::move(dir), std::move(fd), uid, gid, chown);
}

bool remove_launch_dir(const std::string& dir) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd >= 0) {
    remove_entries(dfd, kMaxRemoveDepth);
    ::close(dfd);
  }
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
  LAT_LOG(warn, "agent", "cannot remove ", dir, ": ", why());
  return false;
}

}  // namespace lattice::agent
