#include "launcher/input_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/strings.hpp"
#include "net/fd.hpp"

namespace lattice::launcher {
namespace {

constexpr size_t kFileChunk = 64 * 1024;

}  // namespace

InputSource::InputSource(net::Loop& loop, DataFn on_data, EofFn on_eof)
    : on_data_(std::move(on_data)), on_eof_(std::move(on_eof)), file_timer_(loop) {}

InputSource::~InputSource() {
  if (file_fd_ >= 0) ::close(file_fd_);
}

Result<std::unique_ptr<InputSource>> InputSource::open(net::Loop& loop, int fd, DataFn on_data,
                                                       EofFn on_eof) {
  std::unique_ptr<InputSource> self(new InputSource(loop, std::move(on_data), std::move(on_eof)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(cat("stdin: ", std::strerror(errno)));
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) return make_error(cat("stdin: ", std::strerror(errno)));
  InputSource* raw = self.get();
  if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    // A terminal is a character device that libuv can watch: only the others are read here.
    if (!::isatty(copy)) {
      self->file_fd_ = copy;
      self->file_timer_.start(0, 0, [raw] { raw->read_file(); });
      return self;
    }
  }
  auto stream = net::Stream::open_fd(loop, net::UniqueFd(copy));
  if (!stream) return make_error(cat("stdin: ", stream.error().message));
  self->stream_ = std::move(stream.value());
  self->stream_->start([raw](std::string_view bytes) { raw->on_data_(bytes); },
                       [raw](const Error& why) {
                         if (why.kind != ErrorKind::eof)
                           std::fprintf(stderr, "lattice: reading stdin: %s\n",
                                        why.message.c_str());
                         if (!raw->ended_) {
                           raw->ended_ = true;
                           raw->on_eof_();
                         }
                       });
  return self;
}

void InputSource::pause() {
  if (paused_ || ended_) return;
  paused_ = true;
  if (stream_) stream_->pause_reading();
  file_timer_.stop();
}

void InputSource::resume() {
  if (!paused_ || ended_) return;
  paused_ = false;
  if (stream_) stream_->resume_reading();
  if (file_fd_ >= 0) file_timer_.start(0, 0, [this] { read_file(); });
}

void InputSource::read_file() {
  char buffer[kFileChunk];
  ssize_t n = ::read(file_fd_, buffer, sizeof buffer);
  if (n > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) on_data_(std::string_view(buffer, static_cast<size_t>(n)));
    if (!paused_) file_timer_.start(0, 0, [this] { read_file(); });  // on_data_ may pause
    return;
  }
  if (n < 0) std::fprintf(stderr, "lattice: reading stdin: %s\n", std::strerror(errno));
  ended_ = true;
  on_eof_();
}

}  // namespace lattice::launcher
