#include "secure/private_file.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/strings.hpp"
#include "secure/cluster_key.hpp"

namespace lattice::secure {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string why() { return std::strerror(errno); }

}  // namespace

Result<PrivateFile> read_private_file(const std::string& path, const char* what, size_t max_bytes) {
  if (!initialize()) return make_error("libsodium cannot initialise");
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return make_error(cat("cannot open ", what, ' ', path, ": ", why()));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return make_error(cat("cannot stat ", what, ' ', path, ": ", why()));
  if (!S_ISREG(st.st_mode)) return make_error(cat(what, ' ', path, " is not a regular file"));
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return make_error(cat(what, ' ', path, " has mode ", mode,
                          ": group and others must have no access (chmod 600 ", path, ")"));
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return make_error(
        cat(what, ' ', path, " is owned by uid ", st.st_uid, ", neither this user nor root"));
  auto size = static_cast<size_t>(st.st_size);
  if (size > max_bytes)
    return make_error(cat(what, ' ', path, " holds ", size, " bytes, more than ", max_bytes));
  PrivateFile file{Secret(size + 1), 0};
  while (file.size < size) {
    ssize_t n = ::read(fd.get(), file.bytes.data() + file.size, size - file.size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(cat("cannot read ", what, ' ', path, ": ", why()));
    if (n == 0) break;  // shrank since fstat: judge what was there
    file.size += static_cast<size_t>(n);
  }
  return file;
}

Status write_private_file(const std::string& path, const char* what, const uint8_t* bytes,
                          size_t size) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    if (errno == EEXIST)
      return make_error(cat(path, " already exists: refusing to overwrite it (a ", what, ")"));
    return make_error(cat("cannot create ", what, ' ', path, ": ", why()));
  }
  // umask may have narrowed the mode further, never widened it; make it exactly 0600.
  if (::fchmod(fd.get(), 0600) != 0) return make_error(cat("cannot chmod ", path, ": ", why()));
  size_t put = 0;
  while (put < size) {
    ssize_t n = ::write(fd.get(), bytes + put, size - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::unlink(path.c_str());
      return make_error(cat("cannot write ", what, ' ', path, ": ", why()));
    }
    put += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return make_error(cat("cannot sync ", what, ' ', path, ": ", why()));
  return {};
}

Status generate_key_file(const std::string& path) {
  if (!initialize()) return make_error("libsodium cannot initialise");
  Secret bytes(kClusterKeyBytes);
  randombytes_buf(bytes.data(), bytes.size());
  return write_private_file(path, "key file", bytes.data(), bytes.size());
}

}  // namespace lattice::secure
