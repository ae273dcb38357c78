// LogLimiter against a hand-driven clock: one line per cause per period, the count of the lines
// left out on the next one, causes apart from each other, and a bounded number of causes.
#include "base/log_limiter.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace lattice;

namespace {

struct HandClock final : Clock {
  uint64_t ns = 0;
  uint64_t now_ns() const override { return ns; }
  void advance_ms(uint64_t ms) { ns += ms * 1000000; }
};

}  // namespace

TEST_CASE("one line per second per cause; the next one says how many were left out") {
  HandClock clock;
  LogLimiter limiter(clock);
  CHECK(limiter.admit("cap") == std::string());  // the first passes, with nothing to add
  for (int i = 0; i < 812; ++i) {
    clock.advance_ms(1);
    CHECK_FALSE(limiter.admit("cap"));
  }
  clock.advance_ms(1000 - 812);  // one second after the first line
  CHECK(limiter.admit("cap") == std::string(" (and 812 more like it in the last 1.0 s)"));
  clock.advance_ms(999);
  CHECK_FALSE(limiter.admit("cap"));
  clock.advance_ms(234);
  CHECK(limiter.admit("cap") == std::string(" (and 1 more like it in the last 1.2 s)"));
  // Quiet for a while: the next line passes with nothing to add.
  clock.advance_ms(60000);
  CHECK(limiter.admit("cap") == std::string());
}

TEST_CASE("causes are limited apart") {
  HandClock clock;
  LogLimiter limiter(clock);
  CHECK(limiter.admit("a"));
  CHECK(limiter.admit("b"));  // a flood of "a" does not hide the first "b"
  CHECK_FALSE(limiter.admit("a"));
  CHECK_FALSE(limiter.admit("a"));
  CHECK_FALSE(limiter.admit("b"));
  clock.advance_ms(1500);
  CHECK(limiter.admit("b") == std::string(" (and 1 more like it in the last 1.5 s)"));
  CHECK(limiter.admit("a") == std::string(" (and 2 more like it in the last 1.5 s)"));
}

TEST_CASE("the period is the owner's choice") {
  HandClock clock;
  LogLimiter limiter(clock, 10000);
  CHECK(limiter.admit("x"));
  clock.advance_ms(9999);
  CHECK_FALSE(limiter.admit("x"));
  clock.advance_ms(1);
  CHECK(limiter.admit("x") == std::string(" (and 1 more like it in the last 10.0 s)"));
}

TEST_CASE("at most kMaxCauses causes are tracked; later ones share one count") {
  HandClock clock;
  LogLimiter limiter(clock);
  // Every cause busy: a line written and one left out, so none may be forgotten.
  for (size_t i = 0; i < LogLimiter::kMaxCauses; ++i) {
    CHECK(limiter.admit(std::to_string(i)));
    CHECK_FALSE(limiter.admit(std::to_string(i)));
  }
  CHECK(limiter.admit("new 1"));  // new causes share the overflow count
  CHECK_FALSE(limiter.admit("new 2"));
  CHECK_FALSE(limiter.admit("new 3"));
  clock.advance_ms(1000);
  CHECK(limiter.admit("new 4") == std::string(" (and 2 more like it in the last 1.0 s)"));
  // Tracked causes still count on their own.
  CHECK(limiter.admit("5") == std::string(" (and 1 more like it in the last 1.0 s)"));
  CHECK_FALSE(limiter.admit("fresh"));  // still no room, and the overflow has had its line
  // A cause with nothing left out whose line is a period old is forgotten to make room.
  clock.advance_ms(1000);
  CHECK(limiter.admit("fresh") == std::string());
  CHECK_FALSE(limiter.admit("fresh"));
}

TEST_CASE("log_cause folds numbers so that one kind of message is one cause") {
  CHECK(log_cause("a sealed identity of 700 bytes") == "a sealed identity of # bytes");
  CHECK(log_cause("no handshake within 5 s") == log_cause("no handshake within 12 s"));
  CHECK(log_cause("version 1 is not 2") == "version # is not #");
  CHECK(log_cause("") == "");
}

TEST_CASE("LAT_LOG_LIMITED counts nothing when the level is filtered out") {
  HandClock clock;
  LogLimiter limiter(clock);
  LogLevel before = log_level();
  set_log_level(LogLevel::error);
  for (int i = 0; i < 5; ++i) LAT_LOG_LIMITED(limiter, warn, "test", "c", "line ", i);
  set_log_level(before);
  CHECK(limiter.admit("c") == std::string());  // the first line of "c" it has seen
}
