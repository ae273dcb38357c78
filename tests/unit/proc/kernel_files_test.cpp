// The kernel's cgroup and process files read into values: real lines from a node that mounts
// cgroup v1 controllers beside an empty v2 hierarchy, a v2-only node, and lines a user can
// shape (a mount point with spaces, a command name with ") (").
#include "proc/kernel_files.hpp"

#include <doctest/doctest.h>

#include <string>

namespace lattice::proc {
namespace {

const char* kHybridMountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
    "50 40 0:37 /user.slice /mnt/bound rw - cgroup cgroup rw,name=systemd\n"
    "60 23 0:50 / /home/u/my\\040mounts rw - fuse.sshfs u@h:/ rw\n";

TEST_CASE("mountinfo: every cgroup hierarchy's root mount, with its version and controllers") {
  auto mounts = cgroup_mounts(kHybridMountinfo);
  REQUIRE(mounts.size() == 5);  // not tmpfs, not the bind mount of a subtree, not fuse
  CHECK(mounts[0].path == "/sys/fs/cgroup/cpu");
  CHECK(mounts[0].version == 1);
  CHECK(mounts[0].controllers == std::vector<std::string>{"cpu"});
  CHECK(mounts[1].controllers == std::vector<std::string>{"cpu", "cpuacct"});
  CHECK(mounts[3].controllers == std::vector<std::string>{"name=systemd"});  // not xattr
  CHECK(mounts[4].path == "/sys/fs/cgroup/unified");
  CHECK(mounts[4].version == 2);
  CHECK(mounts[4].controllers.empty());
}

TEST_CASE("mountinfo: escaped mount points, v2-only nodes and lines that do not parse") {
  auto mounts = cgroup_mounts(
      "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
      "70 23 0:60 / /tmp/a\\040b\\134c rw - cgroup cgroup rw,freezer\n"
      "garbage\n"
      "1 2 3 4 5 - cgroup2\n"
      "71 23 0:61 / relative rw - cgroup2 cgroup2 rw\n"
      "\n");
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[0].path == "/sys/fs/cgroup");
  CHECK(mounts[0].version == 2);
  CHECK(mounts[1].path == "/tmp/a b\\c");
  CHECK(mounts[1].controllers == std::vector<std::string>{"freezer"});
}

TEST_CASE("mountinfo: a hierarchy mounted again keeps its first mount point") {
  // A chroot's bind of /sys (what a package check or a container runtime makes) shows every
  // hierarchy a second time, after the system's; a mount over the same point hides the first.
  auto mounts = cgroup_mounts(
      "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
      "90 80 0:36 / /tmp/t/root/sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
      "91 80 0:38 / /tmp/t/root/sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
      "92 41 0:70 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[0].path == "/sys/fs/cgroup/pids");
  CHECK(mounts[1].path == "/sys/fs/cgroup/unified");
  CHECK(mounts[1].device == "0:70");
}

TEST_CASE("/proc/PID/cgroup: hierarchy, controllers, path") {
  auto mine = cgroup_memberships(
      "9:name=systemd:/\n8:pids:/user.slice/x\n4:memory:/process_api/6fd\n"
      "2:cpu,cpuacct:/\n0::/system.slice/lattice-agentd.service\nbad line\n7:x:relative\n"
      "5444444444444444:pids:/too/big\n");
  REQUIRE(mine.size() == 5);
  CHECK(mine[0].controllers == std::vector<std::string>{"name=systemd"});
  CHECK(mine[1].path == "/user.slice/x");
  CHECK(mine[3].controllers == std::vector<std::string>{"cpu", "cpuacct"});
  CHECK(mine[4].hierarchy == 0);
  CHECK(mine[4].controllers.empty());
  CHECK(mine[4].path == "/system.slice/lattice-agentd.service");
}

TEST_CASE("cgroup.procs, /proc/PID/stat and environ") {
  CHECK(parse_pids("12\n345\n\nx\n-4\n0\n99999999999\n") == std::vector<int>{12, 345});
  CHECK(parse_pids("17 4242 9 ") == std::vector<int>{17, 4242, 9});  // task/TID/children
  CHECK(parse_stat_ppid("4242 (sleep) S 17 4242 4242 0 -1") == 17);
  // A command name may hold spaces and parentheses: the fields count from the last ')'.
  CHECK(parse_stat_ppid("4243 (a) S 99 (b)) R 18 1 1") == 18);
  CHECK(parse_stat_ppid("4244 (x") == -1);
  CHECK(parse_stat_ppid("") == -1);
  std::string env("A=1\0LATTICE_LAUNCH_ID=L1\0B=2", 28);
  CHECK(environ_has(env, "LATTICE_LAUNCH_ID=L1"));
  CHECK(!environ_has(env, "LATTICE_LAUNCH_ID=L"));
  CHECK(!environ_has(env, "ID=L1"));
}

}  // namespace
}  // namespace lattice::proc
