// Keeping a launch's processes together, so that whatever they do (setsid, double fork,
// daemonise) they end with the launch: a cgroup per launch where the agent can make one (cgroup
// v2, else a v1 hierarchy, as on nodes that mount v1 controllers beside an empty v2), else the
// agent as child subreaper, so orphans come back to it instead of to PID 1. Chosen once at the
// agent's start and said in its log. An allocation is a group of launch groups with CPU and memory
// limits on them together; a launch group may have limits of its own (--mem), inside its
// allocation's (cgroup_limits.hpp: where the controllers for them are). Files under
// /sys/fs/cgroup and /proc are read and written directly: the kernel answers them at once, without
// I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

enum class ContainmentMode { automatic, cgroup2, cgroup1, subreaper };
std::optional<ContainmentMode> parse_containment_mode(std::string_view name);
std::string_view containment_mode_name(ContainmentMode mode);

// One launch's processes on this node (or an allocation's: AllocationGroup).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  // What a child writes "0" to between its clone and its exec, to join; -1: nothing to join
  // (the subreaper finds its processes by their environment).
  virtual int join_fd() const = 0;
  // A cgroup v2 directory a child can be cloned straight into (CLONE_INTO_CGROUP), which spares
  // the migration join_fd() costs: the kernel waits out an RCU grace period for each one
  // (measured here: 3.3 ms a spawn, up to 31 ms, against 0.24 ms); -1 in v1 and the subreaper.
  virtual int clone_into_fd() const { return -1; }
  // cgroup.procs files of other hierarchies the child also writes "0" to, after joining the
  // group: its allocation's cgroups where cgroup v1 controllers keep the allocation's limits.
  virtual std::vector<int> extra_join_fds() const { return {}; }
  // The processes in it now.
  virtual std::vector<int> members() const = 0;
  // Sends signum to every member; SIGKILL in a cgroup v2 that has cgroup.kill is one write,
  // which also reaches what forks meanwhile.
  virtual void signal(int signum) = 0;
  // Where it is (a cgroup's path), for logs and the admin status.
  virtual std::string describe() const = 0;
  // One line saying how each of its limits is enforced, or that it is not and why (e.g.
  // "memory 2 GiB: cgroup v1 memory controller (memory.limit_in_bytes); cpus 0-1: cgroup v1
  // cpuset"; or "memory 2 GiB: not enforced: no memory controller in cgroup v2 (...) and none
  // mounted as v1"); "no limits asked for" without any. The agent logs it and reports it.
  virtual std::string limits_note() const = 0;
  // Whether a limit asked for is not enforced here (the note says why).
  virtual bool limits_unenforced() const = 0;
  // How many of its processes the kernel's out-of-memory killer has killed since it was made
  // (a count the kernel keeps for it: memory.events in cgroup v2, memory.oom_control in its own
  // v1 memory cgroup); nullopt where nothing counts them for this group alone.
  virtual std::optional<uint64_t> oom_kills() const { return std::nullopt; }
};

// Limits on a group's processes together.
struct GroupLimits {
  std::vector<int> cpus;      // CPU numbers its processes may run on; empty: no CPU limit
  uint64_t memory_bytes = 0;  // 0: no memory limit
  bool empty() const { return cpus.empty() && memory_bytes == 0; }
};

// One allocation's processes on this node: every launch group made in it is inside it; its
// limits hold for all of them together; members()/signal() reach every process in it (all its
// launches and whatever they left behind). Nothing joins it but through its launch groups
// (join_fd() is -1). Destroying it kills nothing (signal SIGKILL and wait for members() to be
// empty first) but removes its cgroups (later, when a launch group outlives it, or a dying
// process still holds one).
class AllocationGroup : public ProcessGroup {
 public:
  // A group for a launch inside the allocation (same contract as Containment::make_group),
  // its limits inside the allocation's. An emptied one without limits of its own may be kept
  // for the allocation's next launch, never for another's or one outside it; the launch groups
  // must be destroyed before the allocation.
  virtual Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker,
                                                           const GroupLimits& limits = {}) = 0;
};

class Containment {
 public:
  virtual ~Containment() = default;
  // Probes this node and takes `mode`; automatic tries cgroup v2, then v1, then the subreaper,
  // and describe() says why each one before was passed over. An explicit cgroup mode that
  // cannot work here is an error.
  static Result<std::unique_ptr<Containment>> choose(ContainmentMode mode);

  virtual ContainmentMode mode() const = 0;
  virtual std::string describe() const = 0;
  // A group for a new launch. `marker` ("NAME=VALUE") is in the environment of every process
  // the launch starts: the subreaper tells launches apart by it. `limits` hold for the launch's
  // processes together on this node (--mem), as an allocation's do: a limit nothing here can
  // keep is said in its limits_note(); one a controller refuses is an error.
  virtual Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker,
                                                           const GroupLimits& limits = {}) = 0;
  // A group for an allocation's launches, with `limits` on all of them together. `marker`
  // ("LATTICE_ALLOC_ID=ID") is in the environment of every process the allocation's launches
  // start. A limit nothing on this node can keep is said in limits_note(); one a controller
  // refuses (CPUs outside the agent's cpuset) is an error.
  virtual Result<std::unique_ptr<AllocationGroup>> make_allocation(const std::string& marker,
                                                                   const GroupLimits& limits) = 0;
  // What agents that died left behind: their launches' and allocations' processes are killed
  // and their groups removed, in every hierarchy. Returns the number of processes killed.
  virtual int remove_leftovers() = 0;
};

}  // namespace lattice::proc
