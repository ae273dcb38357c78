// Log lines: an RFC 3339 time in a file or terminal; in the journal, the syslog priority on every
// line and no time; the journal recognised by its stream's device and inode only.
#include "base/log.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using namespace lattice;

namespace {

// 2026-11-27T21:05:09.042Z
std::chrono::system_clock::time_point at() {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(1795813509042LL));
}

}  // namespace

TEST_CASE("outside the journal a line starts with its full UTC time") {
  CHECK(log_line(LogLevel::warn, "agentd[n1]", "link", "refused", false, at()) ==
        "2026-11-27T21:05:09.042Z agentd[n1] warn link: refused\n");
}

TEST_CASE("in the journal each line carries its priority and no time") {
  CHECK(log_line(LogLevel::error, "agentd[n1]", "agent", "lost", true, at()) ==
        "<3>agentd[n1] error agent: lost\n");
  CHECK(log_line(LogLevel::warn, "t", "x", "m", true, at()) == "<4>t warn x: m\n");
  CHECK(log_line(LogLevel::info, "t", "x", "m", true, at()) == "<6>t info x: m\n");
  CHECK(log_line(LogLevel::debug, "t", "x", "m", true, at()) == "<7>t debug x: m\n");
  CHECK(log_line(LogLevel::trace, "t", "x", "m", true, at()) == "<7>t trace x: m\n");
  // A message of several lines: each is its own entry, at the same priority.
  CHECK(log_line(LogLevel::warn, "t", "x", "one\ntwo\n", true, at()) ==
        "<4>t warn x: one\n<4>two\n");
}

TEST_CASE("the journal is the stream JOURNAL_STREAM names, by device and inode") {
  char path[] = "/tmp/lattice-logtestXXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  CHECK(is_journal_stream(fd, mine.c_str()));
  const std::string other = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1);
  CHECK_FALSE(is_journal_stream(fd, other.c_str()));
  CHECK_FALSE(is_journal_stream(fd, nullptr));
  CHECK_FALSE(is_journal_stream(fd, "garbage"));
  CHECK_FALSE(is_journal_stream(-1, mine.c_str()));
  ::close(fd);
  ::unlink(path);
}

TEST_CASE("fields end an event's line: plain when they can be, quoted and escaped when not") {
  CHECK(log_fields({{"launch", "L1"}, {"node", "n1"}, {"uid", "1000"}}) ==
        " launch=L1 node=n1 uid=1000");
  CHECK(log_fields({{"reason", "exited"}, {"peer", "10.0.0.1:7400"}}) ==
        " reason=exited peer=10.0.0.1:7400");
  CHECK(log_fields({{"user", ""}}) == " user=\"\"");
  CHECK(log_fields({{"x", "a b"}}) == " x=\"a b\"");
  CHECK(log_fields({{"x", "say \"hi\"\n"}}) == " x=\"say \\x22hi\\x22\\x0a\"");
  CHECK(log_fields({{"x", "k=v\\"}}) == " x=\"k=v\\x5c\"");
  CHECK(log_fields({}).empty());
}
