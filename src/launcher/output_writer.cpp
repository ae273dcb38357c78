#include "launcher/output_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/strings.hpp"
#include "net/fd.hpp"

namespace lattice::launcher {
namespace {

// The default limit (fs.pipe-max-size) for a process without CAP_SYS_RESOURCE.
constexpr int kPipeBytes = 1 << 20;

// A pipe or a terminal opened anew (its own file description): non-blocking there changes
// nothing for the shell or the launcher's own stdio. -1 for anything else, or when it cannot
// be (a pipe with no reader left, a socket).
int reopen_nonblocking(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || ::isatty(fd))) return -1;
  return ::open(cat("/proc/self/fd/", fd).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

bool same_file(int a, int b) {
  struct stat sa {};
  struct stat sb {};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

OutputWriter::OutputWriter(net::Loop& loop, int fd, OutputWriter* same) : loop_(loop), fd_(fd) {
  if (same && same_file(fd, same->fd_)) {
    delegate_ = same;
    return;
  }
  int own = reopen_nonblocking(fd);
  if (own < 0) return;
  // A deeper pipe means fewer turns through the loop when the reader lags for a moment (a
  // property of the pipe, so it only ever grows here; refused above the system's limit).
  if (::fcntl(own, F_GETPIPE_SZ) > 0 && ::fcntl(own, F_GETPIPE_SZ) < kPipeBytes)
    ::fcntl(own, F_SETPIPE_SZ, kPipeBytes);
  auto stream = net::Stream::open_fd(loop, net::UniqueFd(own));
  if (!stream) return;
  stream_ = std::move(stream.value());
  // Its failures come from the loop. What it still queues is never sent: a finished stream
  // sends nothing, and tells whoever waits for it to drain to go on.
  stream_->watch_writes([this](const Error& why) {
    if (why.kind == ErrorKind::no_reader) reader_gone();
  });
}

void OutputWriter::write(std::string data) {
  if (delegate_) return delegate_->write(std::move(data));
  if (reader_gone_) return;
  if (stream_) return stream_->write(std::move(data));
  // A file, a device or a socket takes it at once (SIGPIPE is ignored: a reader gone is EPIPE).
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      reader_gone_ = true;
      loop_.defer([self = self_] {
        if (*self) (*self)->reader_gone();
      });
    }
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void OutputWriter::reader_gone() {
  reader_gone_ = true;
  if (auto fn = std::exchange(on_reader_gone_, nullptr)) fn();
}

void OutputWriter::when_drained(std::function<void()> fn) {
  if (delegate_) return delegate_->when_drained(std::move(fn));
  if (stream_) return stream_->when_drained(std::move(fn));
  fn();
}

}  // namespace lattice::launcher
