// What agents report about a launch, for both ends: the answer to its request (LaunchAccepted),
// the ranks' output and exits, the stdin they took, how it ended on a node, and a relayed
// launch's node answers and report copies. Decoders copy out of capnp (readers die with their
// callback) and bound what a hostile agent could make the launcher keep.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lattice.capnp.h"
#include "policy/failure.hpp"
#include "proc/exit_status.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// An agent's answer to a launch request (LaunchAccepted).
struct Accepted {
  std::string node_id;                    // the agent's own node name
  std::vector<std::string> bindings;      // with --cpu-bind: "RANK:CPUS" per local rank (for -v)
  uint64_t replied_us = 0;                // from the request's arrival to this reply, agent's clock
  bool stdin_taken = false;               // it reports the stdin its ranks took (StdinTaken)
  std::vector<std::string> env_left_out;  // hooks left out of a root job's exported environment
  std::string unenforced;  // a limit asked for (--mem) that the node cannot keep, and why
};
// The longest `unenforced` a launcher keeps (a line it prints once per node).
inline constexpr size_t kMaxUnenforcedBytes = 1024;
rpc::Outgoing launch_accepted(const Accepted& accepted);
Accepted decode_accepted(schema::LaunchAccepted::Reader m);

// Whole lines of a rank's stdout or stderr (OutputChunk).
struct Output {
  std::string launch_id;
  int rank = 0;
  bool is_stderr = false;
  std::string data;
};
rpc::Outgoing output(const std::string& launch_id, int rank, bool is_stderr, std::string_view data);
Output decode_output(schema::OutputChunk::Reader m);

struct RankExit {
  std::string launch_id;
  int node_index = 0;
  int rank = 0;
  int pid = 0;
  proc::ExitStatus status;
};
rpc::Outgoing rank_exit(const RankExit& exit);
RankExit decode_rank_exit(schema::RankExit::Reader m);

// Of the launch's stdin node `node_index` received, `bytes` in all were taken (StdinTaken).
struct StdinTaken {
  std::string launch_id;
  int node_index = 0;
  uint64_t bytes = 0;
};
rpc::Outgoing stdin_taken(const StdinTaken& taken);
StdinTaken decode_stdin_taken(schema::StdinTaken::Reader m);

// One fence on one node (FenceTimings); microseconds since the agent got the request, 0: not
// reached.
struct FenceTimes {
  uint64_t epoch = 0;
  uint64_t entered_us = 0, reduced_us = 0, store_us = 0, released_us = 0;
};
// A launch on one node (LaunchTimings); microseconds since the agent got the request, 0: never.
struct NodeTimes {
  uint64_t spawned_us = 0, first_init_us = 0, last_finalize_us = 0, exited_us = 0;
  uint64_t user_known_us = 0;      // the job's user looked up (root agents, another user's job)
  std::vector<FenceTimes> fences;  // the latest, oldest first
};
// Fences a LaunchEnded carries at most (the agent keeps its latest 64; the launcher no more).
inline constexpr size_t kMaxFencesReported = 64;

// A local rank that never entered a fence that timed out, as its agent saw it then.
struct Straggler {
  int rank = 0;
  std::string pmi_state;     // pmi::rank_state_name
  std::string last_command;  // "" = none yet
  uint64_t idle_ms = 0;      // since that command
};

// How a launch ended on one node (LaunchEnded).
struct LaunchEnded {
  std::string launch_id;
  int node_index = 0;
  std::optional<policy::Failure> failure;  // the first this node saw
  std::vector<Straggler> stragglers;       // after a fence timeout
  NodeTimes times;
  uint32_t strays = 0;  // processes the launch left behind, killed once its ranks had exited
};
rpc::Outgoing launch_ended(const LaunchEnded& ended);
LaunchEnded decode_launch_ended(schema::LaunchEnded::Reader m);

// A relayed launch: a node's answer to its request, or its loss, passed up the tree.
struct NodeAnswer {
  std::string launch_id;
  int node_index = 0;
  Accepted accepted;  // when error is empty
  std::string error;  // it refused, or was lost (then `lost`)
  bool lost = false;
};
rpc::Outgoing node_answer(const NodeAnswer& answer);
NodeAnswer decode_node_answer(schema::NodeAnswer::Reader m);

// A report passed up as it came (the session sets its request id afresh).
rpc::Outgoing copy_of(schema::Envelope::Reader envelope);

}  // namespace lattice::wire
