// A LaunchProcesses request decoded into plain values and validated, so that nothing past this
// point reads capnp (or trusts the launcher's numbers). Block layouts given as
// tasksPerNode/firstRank are expanded into rank_nodes here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"

namespace lattice::agent {

struct Peer {
  std::string node_id;
  std::string host;
  int port = 0;
};

struct LaunchSpec {
  std::string launch_id;
  std::string allocation_id;
  std::string entrypoint;
  std::vector<std::string> args;
  int world_size = 0;
  int node_index = 0;
  int head_node = 0;
  std::vector<int> rank_nodes;  // node index of every rank
  std::vector<Peer> peers;      // one per node; never empty after decoding
  std::vector<std::pair<std::string, std::string>> env;
  uint32_t fence_timeout_ms = 0;
  uint32_t fanout = 0;
  bool slurm_compat = false;
  bool use_pmi_port = false;
  std::string workdir;

  int nnodes() const { return static_cast<int>(peers.size()); }
  std::vector<int> local_ranks() const;  // global ranks on this node, ascending
  std::string nodelist() const;          // node ids joined by ','
};

struct LaunchDefaults {
  std::string node_id;  // used when the request names no peers (single-node launch)
  uint32_t fence_timeout_ms = 60000;
  uint32_t fanout = 8;
  bool slurm_compat = false;
};

// Upper bound on ranks per launch: keeps a hostile request from making the agent allocate
// per-rank tables of arbitrary size.
inline constexpr int kMaxWorldSize = 1 << 20;
// Launch ids end up in file names (the per-launch PMI socket): short and path-safe only.
inline constexpr size_t kMaxLaunchIdLength = 64;

Result<LaunchSpec> decode_launch_request(schema::LaunchProcessesRequest::Reader request,
                                         const LaunchDefaults& defaults);

}  // namespace lattice::agent
