// The kernel's process and cgroup bookkeeping as text (/proc/self/mountinfo, /proc/PID/cgroup,
// /proc/PID/stat, cgroup.procs, memory.events) read into plain values. Pure functions:
// containment.cpp does the reading. A mount point or a command name may hold bytes a user chose (a
// FUSE mount's path, a program's name), so nothing here trusts a line to be well formed: what does
// not parse is skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lattice::proc {

// A mounted cgroup hierarchy. v1 hierarchies carry their controllers ("pids", "cpu,cpuacct",
// "name=systemd"); v2 has none here (cgroup.controllers lists what it offers).
struct CgroupMount {
  std::string device;  // mountinfo's MAJ:MIN: one per hierarchy
  std::string path;    // the mount point, unescaped
  int version = 1;     // 1 or 2
  std::vector<std::string> controllers;
};

// Every cgroup and cgroup2 hierarchy in /proc/self/mountinfo, in order, each once. Only a
// hierarchy's root mount counts (a bind mount of a subtree, field 4 not "/", would misplace
// every path). A hierarchy mounted again elsewhere (the same device: a container's or chroot's
// bind of /sys) keeps its first mount point, the system's, which outlives the others; a mount
// over the same point hides the one below it.
std::vector<CgroupMount> cgroup_mounts(std::string_view mountinfo);

// One line of /proc/PID/cgroup: "ID:CONTROLLERS:PATH" (v2: "0::PATH").
struct CgroupMembership {
  int hierarchy = -1;
  std::vector<std::string> controllers;  // empty for v2
  std::string path;                      // absolute, from the hierarchy's root
};
std::vector<CgroupMembership> cgroup_memberships(std::string_view proc_cgroup);

// The pids of a cgroup.procs file (one decimal per line) or of /proc/PID/task/TID/children
// (separated by spaces); anything else is skipped.
std::vector<int> parse_pids(std::string_view text);

// The parent pid in /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may hold spaces and
// parentheses, so the fields are counted from the last ')'); -1 when it does not parse.
int parse_stat_ppid(std::string_view stat);

// Whether a NUL-separated environment block (/proc/PID/environ) holds `entry` ("NAME=VALUE").
bool environ_has(std::string_view environ, std::string_view entry);

// The "oom_kill N" line of a memory cgroup's memory.events (v2) or memory.oom_control (v1): how
// many of its processes the out-of-memory killer killed. Nullopt without one (kernels before
// 4.13 have none in v1).
std::optional<uint64_t> parse_oom_kills(std::string_view text);

}  // namespace lattice::proc
