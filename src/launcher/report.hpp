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
  bool out_of_memory = false;  // the out-of-memory killer sent `signal`
  uint64_t memory_limit = 0;   // then: its launch's memory limit on its node (0: none)
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
// rank 6: no exit status; rank 7: not started; rank 8: killed by the out-of-memory killer
// (memory limit 64 MiB)", grouped by outcome. `rank_nodes[r]` is rank
// r's node; a rank without an exit whose node is settled (it reported its end, which an agent
// does after every exit, or it refused the launch or was never sent it) never started there;
// else its node was lost, and nobody knows.
std::string summarize_exits(const std::map<int, RankResult>& ranks,
                            const std::vector<int>& rank_nodes,
                            const std::vector<bool>& node_settled);

// Prefixes every line of `data` with "LABELRANK: " (a spawned launch's label: "1.").
// `at_start`: whether `data` begins a line, updated for the next piece of the same stream (an
// agent passes a line over 64 KiB on in pieces: only its first gets the label).
std::string label_lines(const std::string& label, int rank, const std::string& data,
                        bool& at_start);

struct Timings {        // milliseconds since the launcher started the launch; <0 = unknown
  double resolve = -1;  // before that: options, layout, user, environment, key, local agents
  double connect = -1, sent = -1, fan_out = -1, spawn = -1, first_init = -1, last_finalize = -1,
         exit = -1, total = -1;
  double credentials = -1;  // the fabric manager's CXI service and key, when the launch has them
  double user_lookup = -1;  // the last agent that had to look the job's user up, when any did
};
std::string format_timings(const Timings& t);

// Where an agent's launch clock (zero when the request arrived) starts on the launcher's: the
// request arrived after it was sent and at least `replied_ms` before its reply came back, and
// the middle of that window is taken (as NTP does: equal delays both ways). The agents' own
// figures are then comparable across nodes within half the window, without synchronised clocks.
double agent_clock_origin_ms(double sent_ms, double accepted_ms, double replied_ms);

// One fence on one node, on the launcher's clock (ms since the launch began; <0: not reached).
struct NodeFence {
  uint64_t epoch = 0;
  std::string node;
  double entered = -1, reduced = -1, store = -1, released = -1;
};
// -v: for the last fence and the slowest one (all of them when there are at most three), when
// the last node reached each phase, which node that was, and the critical path (last rank
// released minus last rank entered, over every node).
std::string format_fence_phases(const std::vector<NodeFence>& fences);

}  // namespace lattice::launcher
