#include "launcher/user_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

int open_for_reading(const std::string& path) {
  // O_NONBLOCK: a FIFO's open does not wait for a writer (it is refused below as no file).
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

// `open` run as `user` when the launcher is root and the user is not (user_files.hpp).
Result<net::UniqueFd> open_as(const std::string& what, const std::string& path,
                              const JobUserInfo& user, const std::function<int()>& open) {
  if (::geteuid() != 0 || user.uid == 0) {
    net::UniqueFd fd(open());
    if (!fd) return make_error(cat("cannot open ", what, " ", path, ": ", std::strerror(errno)));
    return fd;
  }
  net::UniqueFd fd;
  {
    BorrowedIdentity as_user(user);
    if (!as_user.ok())
      return make_error(cat("cannot open ", what, " ", path, ": cannot become user ", user.name,
                            " (uid ", user.uid, ") to open it: ", std::strerror(errno)));
    fd.reset(open());
  }  // errno survives the way back
  if (!fd)
    return make_error(
        cat("cannot open ", what, " ", path, " as user ", user.name, ": ", std::strerror(errno)));
  return fd;
}

}  // namespace

Result<net::UniqueFd> open_output_file(const std::string& path, const JobUserInfo& user,
                                       bool append) {
  return open_as("output file", path, user, [&] { return open_for_writing(path, append); });
}

Result<std::string> read_user_file(const std::string& path, const JobUserInfo& user,
                                   size_t max_bytes) {
  auto fd = open_as("file", path, user, [&] { return open_for_reading(path); });
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(cat(path, " is not a regular file"));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return make_error(cat(path, " is over ", max_bytes, " bytes"));
  std::string text(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd->get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(cat("cannot read ", path, ": ", std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return make_error(cat(path, " is over ", max_bytes, " bytes"));
  text.resize(got);
  return text;
}

}  // namespace lattice::launcher
