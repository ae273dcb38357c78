// An allocation's CPU and memory limits, and a launch's (--mem), kept by the cpuset and memory
// controllers: in the cgroup v2 hierarchy launches are tracked in when the agent's subtree there
// has them, else in the v1 hierarchies they are mounted as (nodes that mount v1 controllers
// beside an empty v2), where the allocation gets a cgroup of its own,
// <v1 root>/lattice-agentd.<pid>/alloc.<random>, that each of its processes joins too, and a
// launch with limits one below its allocation's there (or below the agent's subtree). Chosen
// once per controller with the containment.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "proc/containment.hpp"
#include "proc/kernel_files.hpp"

namespace lattice::proc {

// An allocation's cgroup in a v1 limit hierarchy: its path and its cgroup.procs, open.
struct LimitCgroup {
  std::string dir;
  int procs_fd = -1;
};

// The limits set on one group: where (the caller owns the v1 cgroups from here on), one line
// saying how each limit is enforced, or that it is not and why, and whether one is not.
struct AppliedLimits {
  std::vector<LimitCgroup> cgroups;
  std::string note;
  bool unenforced = false;
  // The file whose "oom_kill N" counts the group's processes the OOM killer killed: its own v1
  // memory cgroup's memory.oom_control; empty: none of its own there (v2: memory.events).
  std::string oom_file;
};

// "memory 64 MiB: not enforced: <why>; cpus 0-1: not enforced: <why>" (for the subreaper).
std::string limits_not_enforced(const GroupLimits& limits, const std::string& why);

class CgroupLimits {
 public:
  // Looks for each controller: in v2, in the controllers of `tracking_base` (the agent's subtree
  // of the tracking hierarchy, `tracking` its mount); else in a v1 hierarchy of its own, where
  // the agent's subtree is made now.
  static std::unique_ptr<CgroupLimits> probe(const std::vector<CgroupMount>& mounts,
                                             const std::vector<CgroupMembership>& mine,
                                             const CgroupMount& tracking,
                                             const std::string& tracking_base);
  // Removes the agent's subtrees in the v1 hierarchies (after every allocation is gone).
  ~CgroupLimits();
  CgroupLimits(const CgroupLimits&) = delete;
  CgroupLimits& operator=(const CgroupLimits&) = delete;

  // Sets `limits` on the group (an allocation, a launch) whose cgroup in the tracking hierarchy
  // is `dir` (named `name` there; its v1 cgroups get the same name, below those of `within` in
  // the same hierarchy: the allocation it is in, whose limits then hold for it too). A limit no
  // controller here can keep is said in the note; one a controller refuses (CPUs outside the
  // agent's cpuset) is an error.
  Result<AppliedLimits> apply(const std::string& dir, const std::string& name,
                              const GroupLimits& limits,
                              const std::vector<LimitCgroup>& within = {});
  // What dead agents left in the v1 hierarchies (remove_dead_agents). Processes killed.
  int remove_leftovers();
  // "; allocation limits: memory by cgroup v1 (...), cpuset not available (...)", for logs.
  std::string describe() const;

  // How one controller reaches allocations.
  struct Controller {
    std::string name;    // "memory", "cpuset"
    int version = 0;     // 2: the tracking v2 hierarchy; 1: a v1 hierarchy; 0: none here
    std::string base;    // v1: the agent's subtree there
    std::string parent;  // v1: the agent's own cgroup there (cpuset: what base copies)
    std::string why_not;
  };

 private:
  CgroupLimits(std::string tracking_base, Controller memory, Controller cpuset)
      : tracking_base_(std::move(tracking_base)),
        memory_(std::move(memory)),
        cpuset_(std::move(cpuset)) {}
  Result<std::string> apply_memory(const std::string& dir, const std::string& name, uint64_t bytes,
                                   const std::vector<LimitCgroup>& within, AppliedLimits& made);
  Result<std::string> apply_cpus(const std::string& dir, const std::string& name,
                                 const std::vector<int>& cpus,
                                 const std::vector<LimitCgroup>& within, AppliedLimits& made);
  // Passes `controller` down the tracking hierarchy from the agent's subtree to `dir`'s parent,
  // so that `dir` has its files.
  Status enable_down_to(const std::string& dir, const std::string& controller);

  std::string tracking_base_;
  Controller memory_, cpuset_;
};

}  // namespace lattice::proc
