// Exit decoding, executable lookup (in a fresh temp dir) and the output line buffer.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "proc/executable.hpp"
#include "proc/exit_status.hpp"
#include "proc/line_buffer.hpp"

namespace lattice::proc {
namespace {

TEST_CASE("exit decoding: job exit codes and words") {
  CHECK(job_exit_code({0, 0}) == 0);
  CHECK(job_exit_code({3, 0}) == 3);
  CHECK(job_exit_code({0, SIGKILL}) == 137);
  CHECK(job_exit_code({0, SIGSEGV}) == 139);
  CHECK(describe({3, 0}) == "exited with status 3");
  CHECK(describe({0, 9}) == "killed by signal 9 (SIGKILL)");
  CHECK(describe({0, SIGSEGV}) == "killed by signal 11 (SIGSEGV)");
  CHECK(describe({0, SIGTERM}) == "killed by signal 15 (SIGTERM)");
  CHECK(describe({0, 77}) == "killed by signal 77");
  CHECK(signal_name(SIGABRT) == "SIGABRT");
  CHECK(signal_number("USR1") == SIGUSR1);
  CHECK(signal_number("sigterm") == SIGTERM);
  CHECK(signal_number("10") == 10);
  CHECK(signal_number("65") == 0);
  CHECK(signal_number("0") == 0);
  CHECK(signal_number("NOPE") == 0);
  CHECK(signal_number("") == 0);
}

struct Dir {
  std::string path;
  Dir() {
    std::string pattern = "/tmp/lattice-proc-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()));
    path = pattern;
  }
  ~Dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name, mode_t mode) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n";
    REQUIRE(::chmod(p.c_str(), mode) == 0);
    return p;
  }
};

TEST_CASE("resolve_executable: paths, PATH search, and refusals") {
  // The path found, or why none was.
  auto got = [](Result<std::string> r) { return r ? *r : r.error().message; };
  Dir dir;
  std::string tool = dir.file("tool", 0755);
  dir.file("plain", 0644);
  std::filesystem::create_directory(dir.path + "/bin");
  std::string in_bin = dir.file("bin/prog", 0755);
  std::filesystem::create_directory(dir.path + "/subdir.exe");
  REQUIRE(::chmod((dir.path + "/subdir.exe").c_str(), 0755) == 0);

  CHECK(got(resolve_executable(tool, "", "/")) == tool);  // absolute
  CHECK(got(resolve_executable("./tool", "", dir.path)) ==
        dir.path + "/./tool");  // relative to cwd
  CHECK(got(resolve_executable("bin/prog", "", dir.path)) == dir.path + "/bin/prog");
  CHECK(got(resolve_executable("prog", "/nonexistent:" + dir.path + "/bin", "/")) == in_bin);
  CHECK(got(resolve_executable("prog", "bin", dir.path)) ==
        dir.path + "/bin/prog");                                                // relative entry
  CHECK(got(resolve_executable("tool", ":", dir.path)) == dir.path + "/tool");  // empty entry = cwd
  CHECK(resolve_executable("sh", "/usr/bin:/bin", "/"));

  CHECK(resolve_executable("sh", "", dir.path));

  // Refusals say which case it is: absent, not executable, a directory.
  CHECK(got(resolve_executable("tool", "", dir.path)) ==
        "not found on PATH (/bin:/usr/bin)");  // no PATH: the default, not the cwd
  CHECK(got(resolve_executable("plain", dir.path, "/")) ==
        dir.path + "/plain is not executable (mode 0644)");
  CHECK(got(resolve_executable("./plain", "", dir.path)) ==
        dir.path + "/./plain is not executable (mode 0644)");
  CHECK(got(resolve_executable("subdir.exe", dir.path, "/")) ==
        dir.path + "/subdir.exe is a directory");
  CHECK(got(resolve_executable("missing", dir.path, "/")) ==
        "not found on PATH (" + dir.path + ")");
  CHECK(got(resolve_executable("./missing", "", dir.path)) == dir.path + "/./missing: not found");
  CHECK(got(resolve_executable("", dir.path, "/")) == "no program named");
  // One that cannot run, then one that can, further on PATH: the one that can.
  CHECK(got(resolve_executable("prog", dir.path + ":" + dir.path + "/bin", "/")) == in_bin);
}

TEST_CASE("resolve_executable with an empty cwd uses the agent's own") {
  Dir dir;
  dir.file("tool", 0755);
  std::string old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  auto found = resolve_executable("./tool", "", "");
  std::filesystem::current_path(old);
  REQUIRE(found);
  CHECK(*found == "./tool");
}

TEST_CASE("LineBuffer joins lines split across feeds and keeps partial lines") {
  LineBuffer lb;
  CHECK(lb.feed("hel").empty());
  auto lines = lb.feed("lo\nwor");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "hello\n");
  lines = lb.feed("ld\n\nlast");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "world\n");
  CHECK(lines[1] == "\n");
  CHECK(lb.flush() == std::string("last"));
  CHECK(!lb.flush());
  CHECK(lb.feed("").empty());
}

TEST_CASE("LineBuffer cuts a giant line into kMaxLineBytes pieces") {
  LineBuffer lb;
  std::string giant(kMaxLineBytes * 2 + 10, 'x');
  auto lines = lb.feed(giant.substr(0, 1000));
  CHECK(lines.empty());
  lines = lb.feed(giant.substr(1000));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].size() == kMaxLineBytes);
  CHECK(lines[1].size() == kMaxLineBytes);
  lines = lb.feed("\nnext\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "xxxxxxxxxx\n");
  CHECK(lines[1] == "next\n");
}

TEST_CASE("LineBuffer never holds more than kMaxLineBytes, newline or not") {
  LineBuffer lb;
  // A partial line just under the cap, then a chunk whose newline would push it past.
  CHECK(lb.feed(std::string(kMaxLineBytes - 5, 'a')).empty());
  auto lines = lb.feed(std::string(10, 'b') + "\n");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].size() == kMaxLineBytes);
  CHECK(lines[1] == "bbbbb\n");
  // A line of exactly the cap, newline included, stays whole.
  lines = lb.feed(std::string(kMaxLineBytes - 1, 'c') + "\n");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].size() == kMaxLineBytes);
  CHECK(lines[0].back() == '\n');
}

}  // namespace
}  // namespace lattice::proc
