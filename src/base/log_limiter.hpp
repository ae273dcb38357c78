// Rate-limited log lines for refusals: a flood (connections, bad clients) must not turn into a
// flood of log lines. At most one line per cause per period (1 s by default) is written; the
// lines in between are counted, and the next one to pass says how many were left out:
//   "refusing 127.0.0.9:4242: ... (and 812 more like it in the last 1.2 s)".
// Counts that no later line reports are lost (a flood that stops is seen by its last line).
//
// One limiter per owner (it is not thread-safe; each loop has its own), one line per site:
//   LAT_LOG_LIMITED(refusals_, warn, "link", "per-source cap", "refusing ", peer, ": ...");
// A cause is a fixed text chosen by the site, or log_cause(message) for messages that carry
// numbers; never raw peer data. At most kMaxCauses causes are tracked at once: beyond that,
// new causes share one count.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.hpp"
#include "base/log.hpp"

namespace lattice {

class LogLimiter {
 public:
  static constexpr size_t kMaxCauses = 64;
  static constexpr uint64_t kDefaultPeriodMs = 1000;

  // `clock` must outlive the limiter.
  explicit LogLimiter(const Clock& clock = monotonic_clock(),
                      uint64_t period_ms = kDefaultPeriodMs);

  // Whether a line of `cause` may be written now. nullopt: leave it out (it is counted).
  // Otherwise the text to append to it: "" or " (and N more like it in the last T s)".
  std::optional<std::string> admit(std::string_view cause);

 private:
  struct Count {
    uint64_t passed_ns = 0;  // when the last line of this cause was written
    uint64_t left_out = 0;   // lines since then that were not
  };
  std::optional<std::string> admit(Count& count, uint64_t now);
  // Forgets causes with nothing left out and no line within the period, to make room.
  void forget_quiet(uint64_t now);

  const Clock& clock_;
  uint64_t period_ns_;
  std::map<std::string, Count, std::less<>> causes_;
  std::optional<Count> overflow_;  // the causes that came while kMaxCauses were tracked
};

// `message` with every run of decimal digits as one '#': a cause for messages that carry
// numbers ("a sealed identity of 700 bytes" and "... of 9 bytes" are one cause).
std::string log_cause(std::string_view message);

}  // namespace lattice

// LAT_LOG through a LogLimiter: nothing is counted when the level is filtered out.
#define LAT_LOG_LIMITED(limiter, level, topic, cause, ...)             \
  do {                                                                 \
    if (::lattice::LogLevel::level <= ::lattice::log_level())          \
      if (auto lat_more_ = (limiter).admit(cause))                     \
        ::lattice::log_write(::lattice::LogLevel::level, topic,        \
                             ::lattice::cat(__VA_ARGS__, *lat_more_)); \
  } while (0)
