// Keeping a launch's processes together, so that whatever they do (setsid, double fork,
// daemonise) they end with the launch: a cgroup per launch where the agent can make one (cgroup
// v2, else a v1 hierarchy, as on nodes that mount v1 controllers beside an empty v2), else the
// agent as child subreaper, so orphans come back to it instead of to PID 1. Chosen once at the
// agent's start and said in its log. Files under /sys/fs/cgroup and /proc are read and written
// directly: the kernel answers them at once, without I/O.
#pragma once

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

// One launch's processes on this node.
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
  // The processes in it now.
  virtual std::vector<int> members() const = 0;
  // Sends signum to every member; SIGKILL in a cgroup v2 that has cgroup.kill is one write,
  // which also reaches what forks meanwhile.
  virtual void signal(int signum) = 0;
  // Where it is (a cgroup's path), for logs and the admin status.
  virtual std::string describe() const = 0;
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
  // the launch starts: the subreaper tells launches apart by it.
  virtual Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker) = 0;
  // What agents that died left behind: their launches' processes are killed and their groups
  // removed. Returns the number of processes killed.
  virtual int remove_leftovers() = 0;
};

}  // namespace lattice::proc
