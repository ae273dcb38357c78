// A launch's end on this node, after its own processes (ranks, escape-hatch commands) have
// exited: whatever is left in its process group was started by them and left behind (a setsid,
// a double fork, a daemon). Those get SIGTERM, then SIGKILL once the grace is over, and are
// counted; the sweep is done when none is left.
#pragma once

#include <cstdint>
#include <functional>
#include <set>

#include "net/loop.hpp"
#include "net/timer.hpp"
#include "proc/containment.hpp"

namespace lattice::agent {

class StraySweep {
 public:
  // `done(strays)` runs from the loop once the group is empty (never from start()).
  StraySweep(net::Loop& loop, proc::ProcessGroup& group, uint64_t grace_ms,
             std::function<void(uint32_t strays)> done);
  void start();  // a second call does nothing
  bool started() const { return started_; }
  bool finished() const { return finished_; }
  uint32_t strays() const { return static_cast<uint32_t>(seen_.size()); }

 private:
  void check();

  proc::ProcessGroup& group_;
  uint64_t grace_ms_;
  std::function<void(uint32_t)> done_;
  net::Timer timer_;
  std::set<int> seen_;
  uint64_t started_ms_ = 0;
  net::Loop& loop_;
  bool started_ = false, killed_ = false, finished_ = false;
};

}  // namespace lattice::agent
