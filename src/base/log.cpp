#include "base/log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

namespace {

int syslog_priority(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return 3;
    case LogLevel::warn:
      return 4;
    case LogLevel::info:
      return 6;
    case LogLevel::debug:
    case LogLevel::trace:
      return 7;
  }
  return 6;
}

// Checked at the first line and again when stderr moves (redirect_stderr_to).
std::optional<bool> g_journal;

bool stderr_is_journal() {
  if (!g_journal) g_journal = is_journal_stream(STDERR_FILENO, std::getenv("JOURNAL_STREAM"));
  return *g_journal;
}

}  // namespace

bool is_journal_stream(int fd, const char* journal_stream) {
  if (!journal_stream) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(journal_stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

std::string log_line(LogLevel level, std::string_view tag, std::string_view topic,
                     std::string_view message, bool journal,
                     std::chrono::system_clock::time_point now) {
  if (journal) {
    const std::string prefix = cat('<', syslog_priority(level), '>');
    std::string head = cat(prefix, tag, ' ', log_level_name(level), ' ', topic, ": ");
    std::string out;
    size_t start = 0;
    for (;;) {
      size_t nl = message.find('\n', start);
      out += cat(start == 0 ? head : prefix, message.substr(start, nl - start), '\n');
      if (nl == std::string_view::npos || nl + 1 == message.size()) break;
      start = nl + 1;
    }
    return out;
  }
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  return cat(stamp, '.', ms / 100, (ms / 10) % 10, ms % 10, "Z ", tag, ' ', log_level_name(level),
             ' ', topic, ": ", message, '\n');
}

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }
void set_log_tag(std::string tag) { g_tag = std::move(tag); }
const std::string& log_tag() { return g_tag; }

std::string log_fields(std::initializer_list<LogField> fields) {
  std::string out;
  for (const auto& f : fields) {
    bool plain = !f.value.empty() && std::all_of(f.value.begin(), f.value.end(), [](char c) {
      return c > 0x20 && c < 0x7f && c != '"' && c != '=' && c != '\\';
    });
    if (plain) {
      out += cat(' ', f.key, '=', f.value);
      continue;
    }
    std::string quoted;
    for (char c : printable(f.value)) quoted += c == '"' ? std::string("\\x22") : std::string(1, c);
    out += cat(' ', f.key, "=\"", quoted, '"');
  }
  return out;
}

void log_write(LogLevel level, std::string_view topic, std::string_view message) {
  std::string line =
      log_line(level, g_tag, topic, message, stderr_is_journal(), std::chrono::system_clock::now());
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
  g_journal.reset();  // a file now, not the journal
  return {};
}

}  // namespace lattice
