// The launcher's configuration file: which one is read, and the fence settings it gives a
// launch whose flags leave them open.
#include "launcher/launcher_file.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace lattice::launcher;

namespace {
std::string temp_file(const std::string& text) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/launcher-file-XXXXXX";
  int fd = ::mkstemp(path.data());
  REQUIRE(fd >= 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("launcher file: --config over $LATTICE_LAUNCHER_CONFIG, none without either") {
  std::string env_file = temp_file("fence: {fanout: 2}\n");
  std::string flag_file = temp_file("fence: {fanout: 5}\n");
  LaunchOptions o;
  auto none = load_launcher_file(o, nullptr);
  REQUIRE(none);
  CHECK(none->fence_fanout == lattice::config::kDefaultFanout);
  CHECK(load_launcher_file(o, "")->fence_fanout == lattice::config::kDefaultFanout);
  CHECK(load_launcher_file(o, env_file.c_str())->fence_fanout == 2);
  o.config_file = flag_file;
  CHECK(load_launcher_file(o, env_file.c_str())->fence_fanout == 5);
  o.config_file = flag_file + ".missing";
  CHECK_FALSE(load_launcher_file(o, env_file.c_str()));
  std::remove(env_file.c_str());
  std::remove(flag_file.c_str());
}

TEST_CASE("launcher file: every launch names its fanout and fence timeout; flags win") {
  lattice::config::LauncherConfig file;
  file.fence_fanout = 3;
  file.fence_timeout_ms = 1500;
  LaunchOptions open;
  settle_fence(open, file);
  CHECK(open.fanout == 3);
  CHECK(open.fence_timeout_ms == 1500);
  LaunchOptions given;
  given.fanout = 7;
  given.fence_timeout_ms = 9000;
  settle_fence(given, file);
  CHECK(given.fanout == 7);
  CHECK(given.fence_timeout_ms == 9000);
  LaunchOptions builtin;
  settle_fence(builtin, lattice::config::LauncherConfig{});
  CHECK(builtin.fanout == lattice::config::kDefaultFanout);
  CHECK(builtin.fence_timeout_ms == lattice::config::kDefaultFenceTimeoutMs);
}
