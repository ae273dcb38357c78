// When each fence reached each phase on this node (issue: cheap, always-on phase figures):
// the last local rank entered, the subtree's contributions were in and merged (sent up, or at
// the root sent down), the whole merged store was in from the parent, and the local ranks were
// released. Microseconds since the launch request arrived, like the launch's own (wire::NodeTimes);
// the launcher lays them on its own clock (-v) and the admin socket shows the latest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "wire/reports.hpp"

namespace lattice::agent {

// As LaunchEnded reports them.
using FencePhases = wire::FenceTimes;

enum class FencePhase { entered, reduced, store, released };

class FencePhaseLog {
 public:
  // The fences kept, newest last: enough for -v and the admin socket, bounded for long jobs.
  static constexpr size_t kKept = 64;

  void record(uint64_t epoch, FencePhase phase, uint64_t at_us) {
    if (log_.empty() || log_.back().epoch < epoch) {
      log_.push_back(FencePhases{epoch});
      if (log_.size() > kKept) log_.pop_front();
    }
    for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
      if (it->epoch != epoch) continue;
      uint64_t& slot = phase == FencePhase::entered   ? it->entered_us
                       : phase == FencePhase::reduced ? it->reduced_us
                       : phase == FencePhase::store   ? it->store_us
                                                      : it->released_us;
      if (slot == 0) slot = at_us == 0 ? 1 : at_us;
      return;
    }
  }
  const std::deque<FencePhases>& fences() const { return log_; }

 private:
  std::deque<FencePhases> log_;
};

}  // namespace lattice::agent
