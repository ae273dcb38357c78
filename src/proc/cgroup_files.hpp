// The files containment reads and writes under /sys/fs/cgroup and /proc, shared by
// containment.cpp (the hierarchy launches are tracked in) and cgroup_limits.cpp (the v1
// hierarchies an allocation's limits are kept in). The kernel answers them at once, without I/O.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "proc/kernel_files.hpp"

namespace lattice::proc {

inline constexpr const char* kAgentPrefix = "lattice-agentd.";

Result<std::string> read_file(const std::string& path);
Status write_file(const std::string& path, std::string_view text);
bool exists(const std::string& path);
// 16 hex digits: names in cgroup trees, which are world-readable, say nothing of what they hold.
std::string random_name();
// The names of the directories in `dir` that start with `prefix`.
std::vector<std::string> subdirectories(const std::string& dir, std::string_view prefix);

// The processes in the cgroup `dir` and every cgroup below it (cgroup.procs lists only its own).
std::vector<int> tree_pids(const std::string& dir);

// This process's cgroup in `mount` (the hierarchy's root joined with its path there) and its
// own subtree below it, <root>/lattice-agentd.<pid>, made (or why not).
struct AgentSubtree {
  std::string root, base;
};
Result<AgentSubtree> make_subtree(const CgroupMount& mount,
                                  const std::vector<CgroupMembership>& mine);

// What agents that died left in `root`: the processes in their subtrees are killed and the
// cgroups removed, deepest first. Returns the number of processes killed.
int remove_dead_agents(const std::string& root);

}  // namespace lattice::proc
