// Logging with topics on stderr: "<time> <tag> <level> <topic>: message", the time in RFC 3339
// (UTC, milliseconds). When stderr is the journal (systemd's JOURNAL_STREAM names it), each line
// instead starts with its syslog priority ("<3>" for error ... "<7>" for debug and trace) and no
// time, which journald keeps as the entry's PRIORITY and stamps itself. The level is
// process-wide, set by main() and again by a reload on the main thread; LAT_LOG skips formatting
// when a level is filtered out.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "base/strings.hpp"

namespace lattice {

enum class LogLevel { error = 0, warn, info, debug, trace };

std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view log_level_name(LogLevel level);

void set_log_level(LogLevel level);
LogLevel log_level();
// Prefix every line with a program/node tag, e.g. "agentd[n1]".
void set_log_tag(std::string tag);
const std::string& log_tag();
void log_write(LogLevel level, std::string_view topic, std::string_view message);
// One log line as log_write() writes it (`journal`: for the journal), newline included; every
// line of a message of several gets the journal's priority.
std::string log_line(LogLevel level, std::string_view tag, std::string_view topic,
                     std::string_view message, bool journal,
                     std::chrono::system_clock::time_point now);
// Fields for the end of an event's line (" launch=ID node=n1 uid=1000"), so that a log search
// can pick one launch's, node's or user's lines. A value that is empty or holds a space, '"',
// '=', '\\' or a byte beyond printable ASCII is quoted, through printable() ('"' as \x22).
struct LogField {
  std::string_view key;
  std::string value;
};
std::string log_fields(std::initializer_list<LogField> fields);
// Whether `fd` is the stream JOURNAL_STREAM ("DEV:INODE") names.
bool is_journal_stream(int fd, const char* journal_stream);
// Makes `path` (appended to, created 0640) this process's stderr, so that everything written
// there, by us or a library, goes to it; again after a rotation moved the old file away.
Status redirect_stderr_to(const std::string& path);

}  // namespace lattice

#define LAT_LOG(level, topic, ...)                                                          \
  do {                                                                                      \
    if (::lattice::LogLevel::level <= ::lattice::log_level())                               \
      ::lattice::log_write(::lattice::LogLevel::level, topic, ::lattice::cat(__VA_ARGS__)); \
  } while (0)
