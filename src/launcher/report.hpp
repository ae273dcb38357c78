// What the launcher prints about a finished job: the job's exit status, the one-line failure
// reason, the per-rank exit summary and the -v timing table. Pure, so formats are unit-tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/failure.hpp"

namespace lattice::launcher {

struct RankResult {
  int node = -1;
  int code = 0;
  int signal = 0;
};

// Why the job failed: the launch policy's (policy/job_policy.hpp keeps the one that explains it).
using JobFailure = policy::Failure;

// A rank that never entered a fence that timed out, as its agent reported it.
struct Straggler {
  int rank = 0;
  std::string node;
  std::string pmi_state;
  std::string last_command;  // "" = none yet
  uint64_t idle_ms = 0;      // since that command
};

// "lattice: straggler report: ..." and one line per rank, by rank ("" when there is none).
std::string format_stragglers(std::vector<Straggler> stragglers);

// 0 when nothing failed and every rank exited 0.
int job_exit_code(const std::optional<JobFailure>& failure, const std::map<int, RankResult>& ranks,
                  int world_size);

// "ranks 0-2,5: exited 0; rank 3: exited with status 7; rank 4: killed by signal 9 (SIGKILL);
// rank 6: no exit status", grouped by outcome.
std::string summarize_exits(const std::map<int, RankResult>& ranks, int world_size);

// Prefixes every line of `data` with "RANK: ".
std::string label_lines(int rank, const std::string& data);

struct Timings {  // milliseconds since the launcher started the launch; <0 = unknown
  double connect = -1, fan_out = -1, spawn = -1, first_init = -1, last_finalize = -1, exit = -1,
         total = -1;
  double credentials = -1;  // the fabric manager's CXI service and key, when the launch has them
};
std::string format_timings(const Timings& t);

}  // namespace lattice::launcher
