// Internals shared by the files that implement Launch (launch.cpp, launch_pmi.cpp): a local
// rank's state and the launch's timing constants.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agent/launch.hpp"

namespace lattice::agent {

// How long ranks get between SIGTERM and SIGKILL when a launch ends on a forwarded signal or
// agent shutdown; aborts on failure use SIGKILL at once.
constexpr uint64_t kKillGraceMs = 2000;
// After the last rank exits, how long its output pipes may stay open (a daemonised grandchild
// can hold them) before the launch ends without them.
constexpr uint64_t kOutputDrainMs = 3000;
// A rank that dropped its PMI connection without finalize usually exits a moment later; its exit
// status is the better reason. If it lives on, fail the launch with the PMI reason after this.
constexpr uint64_t kLostPmiGraceMs = 2000;
// Answers a rank may leave unread before its PMI connection is dropped: far beyond any honest
// backlog (one request in flight, answers of at most a frame each).
constexpr size_t kPmiWriteLimitBytes = size_t{16} << 20;
// Period of the watchdog that checks fence deadlines and lost-PMI ranks.
constexpr uint64_t kWatchPeriodMs = 200;

struct Launch::Rank {
  int rank = 0;
  int local_rank = 0;
  std::unique_ptr<net::Process> process;
  int pid = -1;
  std::unique_ptr<net::Stream> out_stream, err_stream;
  proc::LineBuffer out_lines, err_lines;
  int open_streams = 0;
  bool exited = false;
  bool initialized = false;
  bool finalized = false;
  uint64_t pmi_lost_at_ms = 0;  // PMI connection lost without finalize (0 = not)
  std::string pmi_lost_reason;
};

}  // namespace lattice::agent
