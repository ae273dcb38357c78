// remove_launch_dir on what a job's user may leave in its launch directory: a nested tree (Open
// MPI's session directory) goes; a link to somewhere else is removed, never followed.
#include "agent/socket_dir.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace lattice::agent {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void touch(const std::string& path) { std::ofstream(path) << "x"; }

std::string temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/socket-dir-test-XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

}  // namespace

TEST_CASE("a launch directory goes with its whole tree, and links are not followed") {
  std::string root = temp_dir();
  std::string outside = root + "/outside";
  REQUIRE(::mkdir(outside.c_str(), 0700) == 0);
  touch(outside + "/keep");

  std::string dir = root + "/lattice-L1";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  std::string deep = dir + "/ompi.n1.0/jf.0/0";
  REQUIRE(::mkdir((dir + "/ompi.n1.0").c_str(), 0700) == 0);
  REQUIRE(::mkdir((dir + "/ompi.n1.0/jf.0").c_str(), 0700) == 0);
  REQUIRE(::mkdir(deep.c_str(), 0700) == 0);
  touch(deep + "/vader_segment");
  touch(dir + "/pmi.sock");
  REQUIRE(::symlink(outside.c_str(), (dir + "/link-to-outside").c_str()) == 0);
  REQUIRE(::symlink(outside.c_str(), (deep + "/deep-link").c_str()) == 0);

  CHECK(remove_launch_dir(dir));
  CHECK_FALSE(exists(dir));
  CHECK(exists(outside + "/keep"));  // reached only through links: untouched

  ::unlink((outside + "/keep").c_str());
  ::rmdir(outside.c_str());
  ::rmdir(root.c_str());
}

TEST_CASE("a missing launch directory counts as removed") {
  CHECK(remove_launch_dir("/nonexistent-lattice-dir/lattice-x"));
}

}  // namespace lattice::agent
