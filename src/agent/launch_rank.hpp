// Internals shared by the files that implement Launch (launch.cpp, launch_pmi.cpp,
// launch_pmix.cpp): a local rank's state and the launch's timing constants.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agent/launch.hpp"

namespace lattice::agent {

// The policy's timers (policy::PolicyTimes): SIGTERM -> SIGKILL on agent shutdown (failures
// kill at once); last exit -> stop waiting for pipes a daemonised grandchild holds; a rank that
// dropped PMI without finalize -> fail with that reason unless its exit status comes first.
constexpr policy::PolicyTimes kPolicyTimes{2000, 3000, 2000};
// Answers a rank may leave unread before its PMI connection is dropped: far beyond any honest
// backlog (one request in flight, answers of at most a frame each).
constexpr size_t kPmiWriteLimitBytes = size_t{16} << 20;
// The launcher's stdin held for input ranks not spawned yet: far beyond what arrives before
// a spawn that comes one loop turn after the launch request.
constexpr size_t kMaxPendingInputBytes = size_t{64} << 20;
// The launcher hears how much stdin the input ranks took each time this much more was taken:
// well under its window (launcher/stdin_feed.cpp), so it never waits for a report that is not due.
constexpr uint64_t kInputReportBytes = uint64_t{1} << 20;
// What the launch's ranks left behind (StraySweep) gets from SIGTERM to SIGKILL, as ranks do
// when the agent stops.
constexpr uint64_t kStrayGraceMs = kPolicyTimes.grace_ms;
// Period of the watchdog that checks fence deadlines and lost-PMI ranks.
constexpr uint64_t kWatchPeriodMs = 200;
// Links to the fence neighbours are held from the first rank's wire-up, or after this.
constexpr uint64_t kNeighbourLinksAfterMs = 1000;

struct Launch::Rank {
  int rank = 0;
  int local_rank = 0;
  int app = 0;  // index into LaunchSpec::apps
  std::unique_ptr<net::Process> process;
  int pid = -1;
  std::unique_ptr<net::Stream> out_stream, err_stream;
  std::unique_ptr<net::Stream> in_stream;  // the launcher's stdin, for an input rank
  proc::LineBuffer out_lines, err_lines;
  std::vector<int> cpus;  // --cpu-bind's choice; empty: not bound
  bool initialized = false;
  bool finalized = false;
};

}  // namespace lattice::agent
