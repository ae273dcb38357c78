// One allocation on this node (wire::AllocationSpec, from a key holder): whose it is, its nodes,
// the group its launches are contained in (with its CPU and memory limits), its time limit
// counted here from its start, and its end. The agent's table owns it and the launches in it;
// when it ends, the agent ends those launches (Hooks::ending) and the allocation kills whatever
// else is left in its group: SIGTERM, and SIGKILL after a grace. It is gone once its group is
// empty (Hooks::drained) and the agent has let its launches go.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/launch_spec.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "proc/containment.hpp"
#include "wire/allocation.hpp"

namespace lattice::agent {

// What is left in an ended allocation's group gets this long after SIGTERM, as a launch's ranks.
constexpr uint64_t kAllocationGraceMs = 2000;

class Allocation {
 public:
  struct Hooks {
    std::function<void(Allocation&)> ending;   // its launches must end
    std::function<void(Allocation&)> drained;  // nothing of it runs any more
  };
  // `cpus`: the CPUs it holds here (empty: not limited); `owner_conn` the link it came on.
  Allocation(net::Loop& loop, wire::AllocationSpec spec, std::vector<int> cpus, uint64_t owner_conn,
             std::unique_ptr<proc::AllocationGroup> group, Hooks hooks);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  const wire::AllocationSpec& spec() const { return spec_; }
  const std::string& id() const { return spec_.id; }
  const std::vector<int>& cpus() const { return cpus_; }
  uint64_t owner_conn() const { return owner_conn_; }
  proc::AllocationGroup* group() { return group_.get(); }
  bool ending() const { return ending_; }
  bool drained() const { return drained_; }
  const std::string& end_reason() const { return reason_; }
  bool time_limit_reached() const { return time_limit_; }
  uint32_t killed() const { return killed_; }
  uint64_t remaining_ms() const;  // 0: no time limit (or none left)
  // "n[1-4]": its nodes, as LATTICE_NODELIST lists a launch's.
  std::string nodelist() const;
  // Its description for its user's launcher (never the CXI key).
  wire::AllocationInfo info() const;
  // Further variables for every process of `launch`, a launch in it: its user's door, so that
  // `lattice launch` inside finds it, and (slurm_compat) SLURM_JOB_*; its batch step (the
  // launch without PMI) also gets the allocation's nodes as its own.
  std::vector<std::pair<std::string, std::string>> launch_env(const LaunchSpec& launch,
                                                              const std::string& door) const;

  // Ends it, once: `time_limit` when its time ran out.
  void end(std::string reason, bool time_limit = false);

 private:
  void watch_group();

  net::Loop& loop_;
  wire::AllocationSpec spec_;
  std::vector<int> cpus_;
  uint64_t owner_conn_;
  std::unique_ptr<proc::AllocationGroup> group_;
  Hooks hooks_;
  uint64_t started_ms_;
  net::Timer limit_timer_;
  net::Timer kill_timer_;
  net::Timer watch_timer_;
  bool ending_ = false;
  bool drained_ = false;
  bool time_limit_ = false;
  std::string reason_;
  uint32_t killed_ = 0;
};

}  // namespace lattice::agent
