// Logging with topics on stderr: "<time> <level> <topic>: message". The level is process-wide,
// set by main() and again by a reload on the main thread; LAT_LOG skips formatting when a level
// is filtered out.
#pragma once

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
// Makes `path` (appended to, created 0640) this process's stderr, so that everything written
// there, by us or a library, goes to it; again after a rotation moved the old file away.
Status redirect_stderr_to(const std::string& path);

}  // namespace lattice

#define LAT_LOG(level, topic, ...)                                                          \
  do {                                                                                      \
    if (::lattice::LogLevel::level <= ::lattice::log_level())                               \
      ::lattice::log_write(::lattice::LogLevel::level, topic, ::lattice::cat(__VA_ARGS__)); \
  } while (0)
