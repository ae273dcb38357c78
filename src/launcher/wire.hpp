// The launcher's side of the schema: every conversion between its structs and Cap'n Proto
// messages, in one place. Readers are valid only during the callback that received them:
// decoders copy out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric/cxi_client.hpp"
#include "lattice.capnp.h"
#include "launcher/export_env.hpp"
#include "launcher/job_user.hpp"
#include "launcher/layout.hpp"
#include "launcher/options.hpp"
#include "launcher/report.hpp"
#include "proc/resource_limits.hpp"
#include "rpc/outgoing.hpp"
#include "wire/rank_layout.hpp"

namespace lattice::launcher::wire {

// What one launch sends every agent besides the layout.
struct JobRequest {
  std::string launch_id;
  JobUserInfo user;
  EnvList exported;       // what --export harvested (AppSetup.environment); --env's values win
  EnvList assigned = {};  // --export's NAME=VALUE items: under every app's --env, over `exported`
  // A relayed launch (job.hpp), and this launcher's handshake name, which the head's children
  // check reports against; a star launch has neither.
  bool relayed = false;
  std::string launcher_name = {};
  // What ranks inherit from this launcher, as srun's tasks: its umask and soft limits.
  uint32_t umask = 022;
  std::vector<proc::Limit> limits = {};
};

struct Peer {
  std::string node_id;
  std::string host;
  int port = 0;
};

// What every node's request says about the launch's nodes and where its ranks run, worked out
// once per launch: host lists, one port and a layout rule when the names and the layout allow
// (then a request's size does not grow with the nodes), else the lists themselves.
struct LaunchNodes {
  std::vector<Peer> peers;
  std::optional<std::string> node_ids, hosts;  // host lists: both, or neither
  std::vector<uint16_t> ports;                 // with them: one for all, or one per node
  std::optional<lattice::wire::RankLayout> ranks;
};
LaunchNodes launch_nodes(std::vector<Peer> peers, const Layout& layout);

// The LaunchProcesses request for node `node_index` of `nodes`; with `cxi`, the launch's CXI
// credentials (the message is then marked secret: its arena is wiped when it goes).
rpc::Outgoing launch_request(const LaunchOptions& options, const JobRequest& request,
                             const Layout& layout, const LaunchNodes& nodes, int node_index,
                             const std::string& workdir,
                             const fabric::CxiCredentials* cxi = nullptr);
std::string accepted_node_id(schema::LaunchAccepted::Reader reply);
// The agent's CPU bindings, "RANK:CPUS" each (with --cpu-bind), for -v.
std::vector<std::string> accepted_bindings(schema::LaunchAccepted::Reader reply);
// Milliseconds between the request's arrival at the agent and its reply, on the agent's clock.
double accepted_replied_ms(schema::LaunchAccepted::Reader reply);
// The agent reports the stdin its ranks took (StdinTaken): stdin to it may be held back.
bool accepted_stdin_taken(schema::LaunchAccepted::Reader reply);
// The hooks the agent left out of a root job's exported environment (proc::leave_out_hooks).
std::vector<std::string> accepted_env_left_out(schema::LaunchAccepted::Reader reply);
// A piece of the launcher's stdin for the launch's input rank(s); `eof` ends it.
rpc::Outgoing stdin_chunk(const std::string& launch_id, std::string_view data,
                          bool eof);  // "" when the agent gave none

// Aborts: lattice::wire::abort_message (shared with the agents).
rpc::Outgoing signal(const std::string& launch_id, int signum);

struct Output {
  int rank = 0;
  bool is_stderr = false;
  std::string data;
};
Output decode_output(schema::OutputChunk::Reader m);

struct RankExit {
  int rank = 0;
  RankResult result;
};
RankExit decode_rank_exit(schema::RankExit::Reader m);

// Microseconds since the agent got the request; 0 = never reached.
struct NodeTimes {
  uint64_t spawned_us = 0, first_init_us = 0, last_finalize_us = 0, exited_us = 0;
  uint64_t user_known_us = 0;  // the job's user looked up (root agents, another user's job)
  struct Fence {               // microseconds since the agent got the request; 0: not reached
    uint64_t epoch = 0, entered_us = 0, reduced_us = 0, store_us = 0, released_us = 0;
  };
  std::vector<Fence> fences;
};
// Fences kept per node from a LaunchEnded (the agent sends its latest 64).
inline constexpr size_t kMaxFencesReported = 64;
struct Ended {
  std::optional<JobFailure> failure;
  std::vector<Straggler> stragglers;
  NodeTimes times;
  uint32_t strays = 0;  // processes the launch left behind on the node, killed by its agent
};
// `node_id`: the sending agent's, for its stragglers.
Ended decode_ended(schema::LaunchEnded::Reader m, const std::string& node_id);

}  // namespace lattice::launcher::wire
