#include "base/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace lattice {
namespace {
// Process-wide by nature (stderr is); written by the main thread only.
LogLevel g_level = LogLevel::info;
std::string g_tag = "lattice";
}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(LogLevel::trace); ++i) {
    auto level = static_cast<LogLevel>(i);
    if (log_level_name(level) == name) return level;
  }
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "error";
    case LogLevel::warn:
      return "warn";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
    case LogLevel::trace:
      return "trace";
  }
  return "?";
}

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }
void set_log_tag(std::string tag) { g_tag = std::move(tag); }
const std::string& log_tag() { return g_tag; }

void log_write(LogLevel level, std::string_view topic, std::string_view message) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
  std::string line = cat(stamp, '.', ms / 100, (ms / 10) % 10, ms % 10, ' ', g_tag, ' ',
                         log_level_name(level), ' ', topic, ": ", message, '\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

Status redirect_stderr_to(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) return make_error(cat("cannot open log file ", path, ": ", std::strerror(errno)));
  std::fflush(stderr);
  bool ok = ::dup2(fd, STDERR_FILENO) == STDERR_FILENO;
  int saved = errno;
  ::close(fd);
  if (!ok) return make_error(cat("cannot log to ", path, ": ", std::strerror(saved)));
  return {};
}

}  // namespace lattice
