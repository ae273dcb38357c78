// Containment on this machine, for real: each mode that works here keeps a double-forked,
// setsid'd child in the launch's group, finds it there, and kills it. Run as root (as CI
// runs); a mode this machine cannot offer is said and skipped, never faked.
#include "proc/containment.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

namespace lattice::proc {
namespace {

// A child in `group` that leaves a grandchild behind in a session of its own and exits.
int start_stray(ProcessGroup& group, const std::string& marker) {
  int ready[2];
  REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);  // the exec closes the grandchild's end
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (group.join_fd() >= 0 && ::write(group.join_fd(), "0", 1) != 1) _exit(3);
    ::putenv(const_cast<char*>(marker.c_str()));
    if (::fork() == 0) {
      ::setsid();
      ::close(ready[0]);
      ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
      _exit(4);
    }
    _exit(0);
  }
  ::close(ready[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  char c;
  (void)::read(ready[0], &c, 1);  // EOF once the grandchild has exec'd
  ::close(ready[0]);
  return status;
}

bool wait_empty(ProcessGroup& group) {
  for (int i = 0; i < 500; ++i) {
    if (group.members().empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void exercise(ContainmentMode mode) {
  auto containment = Containment::choose(mode);
  if (!containment) {
    MESSAGE("not on this machine: ", containment.error().message);
    return;
  }
  auto& chosen = *containment.value();
  CHECK(chosen.mode() == mode);
  MESSAGE(chosen.describe());
  std::string marker = "LATTICE_LAUNCH_ID=unit-" + std::to_string(::getpid());
  auto group = chosen.make_group(marker);
  REQUIRE(group);
  CHECK((*group)->members().empty());
  REQUIRE(start_stray(**group, marker) == 0);
  auto members = (*group)->members();
  REQUIRE(members.size() == 1);
  (*group)->signal(SIGKILL);
  CHECK(wait_empty(**group));
  // The subreaper adopted the stray: reap it, as the agent's orphan reaper does.
  if (mode == ContainmentMode::subreaper) ::waitpid(members[0], nullptr, 0);
}

TEST_CASE("cgroup v2: a stray joins the launch's group and dies with it") {
  exercise(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: a stray joins the launch's group and dies with it") {
  exercise(ContainmentMode::cgroup1);
}
TEST_CASE("subreaper: a stray comes back to this process and is found by its environment") {
  exercise(ContainmentMode::subreaper);
}

TEST_CASE("containment modes by name") {
  CHECK(parse_containment_mode("cgroup1") == ContainmentMode::cgroup1);
  CHECK(!parse_containment_mode("cgroups"));
  CHECK(containment_mode_name(ContainmentMode::automatic) == "auto");
}

}  // namespace
}  // namespace lattice::proc
