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
// A piece of the launcher's stdin for the launch's input rank(s); `eof` ends it.
rpc::Outgoing stdin_chunk(const std::string& launch_id, std::string_view data,
                          bool eof);  // "" when the agent gave none

// Aborts: lattice::wire::abort_message (shared with the agents).
rpc::Outgoing signal(const std::string& launch_id, int signum);

}  // namespace lattice::launcher::wire
