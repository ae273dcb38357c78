// An allocation's CPU and memory limits, kept by the cpuset and memory controllers: in the
// cgroup v2 hierarchy launches are tracked in when the agent's subtree there has them, else in
// the v1 hierarchies they are mounted as (nodes that mount v1 controllers beside an empty v2),
// where the allocation gets a cgroup of its own, <v1 root>/lattice-agentd.<pid>/alloc.<random>,
// that each of its processes joins too. Chosen once per controller with the containment.
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

// The limits set on one allocation: where (the caller owns the v1 cgroups from here on), and
// one line saying how each limit is enforced, or that it is not and why.
struct AppliedLimits {
  std::vector<LimitCgroup> cgroups;
  std::string note;
};

// "memory 64 MiB: not enforced: <why>; cpus 0-1: not enforced: <why>" (for the subreaper).
std::string limits_not_enforced(const AllocationLimits& limits, const std::string& why);

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

  // Sets `limits` on the allocation whose cgroup in the tracking hierarchy is `dir` (named
  // `name` there; its v1 cgroups get the same name). A limit no controller here can keep is
  // said in the note; one a controller refuses (CPUs outside the agent's cpuset) is an error.
  Result<AppliedLimits> apply(const std::string& dir, const std::string& name,
                              const AllocationLimits& limits);
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
                                   std::vector<LimitCgroup>& made);
  Result<std::string> apply_cpus(const std::string& dir, const std::string& name,
                                 const std::vector<int>& cpus, std::vector<LimitCgroup>& made);

  std::string tracking_base_;
  Controller memory_, cpuset_;
};

}  // namespace lattice::proc
