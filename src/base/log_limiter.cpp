#include "base/log_limiter.hpp"

#include <cctype>

#include "base/strings.hpp"

namespace lattice {

LogLimiter::LogLimiter(const Clock& clock, uint64_t period_ms)
    : clock_(clock), period_ns_(period_ms * 1000000) {}

std::optional<std::string> LogLimiter::admit(std::string_view cause) {
  uint64_t now = clock_.now_ns();
  auto it = causes_.find(cause);
  if (it == causes_.end()) {
    if (causes_.size() >= kMaxCauses) forget_quiet(now);
    if (causes_.size() >= kMaxCauses) {
      if (overflow_) return admit(*overflow_, now);
      overflow_ = Count{now, 0};
      return std::string();
    }
    causes_.emplace(std::string(cause), Count{now, 0});
    return std::string();
  }
  return admit(it->second, now);
}

std::optional<std::string> LogLimiter::admit(Count& count, uint64_t now) {
  uint64_t since = now - count.passed_ns;
  if (since < period_ns_) {
    ++count.left_out;
    return std::nullopt;
  }
  std::string more;
  if (count.left_out > 0) {
    uint64_t tenths = (since + 50000000) / 100000000;  // rounded to 0.1 s
    more = cat(" (and ", count.left_out, " more like it in the last ", tenths / 10, '.',
               tenths % 10, " s)");
  }
  count = Count{now, 0};
  return more;
}

void LogLimiter::forget_quiet(uint64_t now) {
  for (auto it = causes_.begin(); it != causes_.end();) {
    bool quiet = it->second.left_out == 0 && now - it->second.passed_ns >= period_ns_;
    it = quiet ? causes_.erase(it) : std::next(it);
  }
}

std::string log_cause(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digit)
      out += c;
    else if (out.empty() || out.back() != '#')
      out += '#';
  }
  return out;
}

}  // namespace lattice
