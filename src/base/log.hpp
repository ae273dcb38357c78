// Logging with topics on stderr: "<time> <level> <topic>: message". The level is process-wide
// and set once by main(); LAT_LOG skips formatting when a level is filtered out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

}  // namespace lattice

#define LAT_LOG(level, topic, ...)                                                          \
  do {                                                                                      \
    if (::lattice::LogLevel::level <= ::lattice::log_level())                               \
      ::lattice::log_write(::lattice::LogLevel::level, topic, ::lattice::cat(__VA_ARGS__)); \
  } while (0)
