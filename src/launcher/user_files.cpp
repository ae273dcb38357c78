#include "launcher/user_files.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/strings.hpp"

namespace lattice::launcher {
namespace {

// Raw system calls, each changing the calling thread only (user_files.hpp). Ids go as longs:
// the variadic syscall() reads every argument as one. setfsuid and setfsgid return the previous
// id and cannot fail visibly, so each change is read back (an id of -1 changes nothing).
long fsuid(long uid) { return ::syscall(SYS_setfsuid, uid); }
long fsgid(long gid) { return ::syscall(SYS_setfsgid, gid); }
bool set_groups(const std::vector<gid_t>& groups) {
  return ::syscall(SYS_setgroups, static_cast<long>(groups.size()), groups.data()) == 0;
}

// The calling thread's filesystem identity as `user`'s, while it lives.
class BorrowedIdentity {
 public:
  // Check ok() before relying on it.
  explicit BorrowedIdentity(const JobUserInfo& user) {
    long count = ::syscall(SYS_getgroups, 0L, nullptr);
    if (count < 0) return;
    own_groups_.resize(static_cast<size_t>(count));
    if (::syscall(SYS_getgroups, count, own_groups_.data()) != count) return;
    own_gid_ = fsgid(-1);
    std::vector<gid_t> groups{user.gid};
    groups.insert(groups.end(), user.groups.begin(), user.groups.end());
    if (!set_groups(groups)) return;
    changed_ = true;
    fsgid(user.gid);
    fsuid(user.uid);
    ok_ = fsgid(-1) == user.gid && fsuid(-1) == user.uid;
    if (!ok_) errno = EPERM;
  }
  ~BorrowedIdentity() {
    if (!changed_) return;
    int saved = errno;
    fsuid(0);
    fsgid(own_gid_);
    // Going on as someone else would be worse than stopping.
    if (fsuid(-1) != 0 || fsgid(-1) != own_gid_ || !set_groups(own_groups_)) {
      std::fputs("lattice: cannot take back the launcher's own identity after opening a file\n",
                 stderr);
      std::abort();
    }
    errno = saved;
  }
  BorrowedIdentity(const BorrowedIdentity&) = delete;
  BorrowedIdentity& operator=(const BorrowedIdentity&) = delete;

  bool ok() const { return ok_; }

 private:
  std::vector<gid_t> own_groups_;
  long own_gid_ = 0;
  bool changed_ = false;
  bool ok_ = false;
};

int open_for_writing(const std::string& path, bool append) {
  // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of holding the loop.
  int fd = ::open(
      path.c_str(),
      O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
  if (fd < 0) return -1;
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

Result<net::UniqueFd> open_output_file(const std::string& path, const JobUserInfo& user,
                                       bool append) {
  if (::geteuid() != 0 || user.uid == 0) {
    net::UniqueFd fd(open_for_writing(path, append));
    if (!fd) return make_error(cat("cannot open output file ", path, ": ", std::strerror(errno)));
    return fd;
  }
  net::UniqueFd fd;
  {
    BorrowedIdentity as_user(user);
    if (!as_user.ok())
      return make_error(cat("cannot open output file ", path, ": cannot become user ", user.name,
                            " (uid ", user.uid, ") to open it: ", std::strerror(errno)));
    fd.reset(open_for_writing(path, append));
  }  // errno survives the way back
  if (!fd)
    return make_error(
        cat("cannot open output file ", path, " as user ", user.name, ": ", std::strerror(errno)));
  return fd;
}

}  // namespace lattice::launcher
