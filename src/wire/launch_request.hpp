// The launch request (LaunchProcessesRequest) as plain values, for both ends: the launcher
// fills one and encodes it for each node; an agent decodes what it got and judges it against
// its own configuration (agent/launch_spec.hpp). The decoder copies out of capnp and refuses
// only what no agent could take (sizes beyond the request's own bounds); the compact forms
// (peerList, rankLayout) stay compact: they are expanded, bounded, where they are judged.
// Both forms of the request are read: the seed's (tasksPerNode, firstRank, worldSize, peers,
// headNodeIndex: what lattice-api sends) and the launcher's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"
#include "proc/resource_limits.hpp"
#include "rpc/outgoing.hpp"
#include "secure/secret.hpp"
#include "wire/pmi_mode.hpp"
#include "wire/rank_layout.hpp"

namespace lattice::wire {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// Who the ranks run as.
struct JobUser {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::optional<std::vector<uint32_t>> groups;  // nullopt: the node's own (initgroups)
  std::string name;
};

// One program of an MPMD launch; its ranks follow those of the apps before it.
struct Application {
  std::string entrypoint;
  std::vector<std::string> args;
  EnvList env;  // its own, over the request's
  uint32_t size = 0;
};

// MPMD apps (and PMIx_Spawn's), both ways.
void encode_apps(capnp::List<schema::Application>::Builder list,
                 const std::vector<Application>& apps);
std::vector<Application> apps_of(capnp::List<schema::Application>::Reader list);

struct PeerInfo {
  std::string node_id;
  std::string host;
  uint16_t port = 0;
};

// The peers as host lists (base/hostlist), by node index: one port for all, or one per node.
struct PeerList {
  std::string node_ids;
  std::string hosts;
  std::vector<uint16_t> ports;
};

// The launch's Slingshot CXI service. The key stays in one place of guarded memory: shared,
// never copied (a decoded request owns it; the launcher's points into its lease).
struct CxiKey {
  uint32_t vni = 0;
  uint32_t svc_id = 0;
  std::shared_ptr<const secure::Secret> auth_key;  // never empty: no key, no CxiKey
};
// Longest CXI auth key accepted, in bytes.
inline constexpr size_t kMaxCxiKeyBytes = 256;

// How ranks are scheduled (lattice launch --sched; agent/launch_spec.hpp says why).
enum class RankScheduling { automatic, normal, batch };

// The launch and rank whose PMIx_Spawn made a launch.
struct SpawnParent {
  std::string launch_id;
  uint32_t rank = 0;
  std::string family;  // the first launch of the family (empty: launch_id)

  const std::string& family_id() const { return family.empty() ? launch_id : family; }
};

struct LaunchRequest {
  std::string launch_id;
  std::string allocation_id;
  std::string entrypoint;  // one app: this and args; MPMD: empty, and apps
  std::vector<std::string> args;
  uint32_t tasks_per_node = 0;  // the seed's block shorthand, when neither rank form is given
  uint32_t first_rank = 0;
  uint32_t world_size = 0;
  EnvList env;
  PmiMode pmi = PmiMode::pmi;
  std::optional<CxiKey> cxi;
  std::vector<PeerInfo> peers;  // or, when empty, peer_list
  uint32_t head_node_index = 0;
  uint32_t node_index = 0;
  std::vector<uint32_t> rank_nodes;  // or, when empty, rank_layout, else the block shorthand
  uint32_t fence_timeout_ms = 0;
  bool slurm_compat = false;
  std::string workdir;
  uint32_t fanout = 0;
  bool use_pmi_port = false;
  std::optional<JobUser> user;
  uint64_t time_limit_ms = 0;
  bool kill_on_bad_exit = true;
  EnvList harvested;   // AppSetup.environment: what --export took from the launcher's
  std::string vendor;  // AppSetup.vendor (PMIx setup data; no agent takes it yet)
  int32_t input_rank = 0;
  proc::CpuBind cpu_bind;
  uint32_t cpus_per_task = 0;  // -c; 0: not given
  proc::GpuRequest gpus;
  std::vector<Application> apps;
  std::optional<PeerList> peer_list;
  std::optional<RankLayout> rank_layout;
  RankScheduling scheduling = RankScheduling::automatic;
  bool relayed = false;
  std::string launcher_name;
  // What ranks inherit from the launcher; nullopt: the agent's own. Resources this side does
  // not know are left out when decoding.
  std::optional<uint32_t> umask;
  std::vector<proc::Limit> limits;
  bool hatch_command = false;
  bool unbuffered = false;
  int32_t warn_signal = 0;  // 0: none
  uint64_t warn_before_ms = 0;
  uint64_t memory_bytes = 0;    // --mem, per node; 0: none
  uint64_t memory_per_cpu = 0;  // --mem-per-cpu; 0: none
  bool exclusive = false;
  std::optional<SpawnParent> spawned_by;  // PMIx_Spawn's children
};

// Pieces other messages share (an allocation's user, nodes and CXI service).
void set_job_user(schema::JobUser::Builder out, const JobUser& user);
JobUser job_user_of(schema::JobUser::Reader in);
// False (and nothing set) without credentials; the caller marks its message secret when true.
bool set_cxi(schema::CxiCredentials::Builder out, const std::optional<CxiKey>& cxi);
// Nullopt when the message carries no key; an error for one beyond kMaxCxiKeyBytes.
Result<std::optional<CxiKey>> cxi_of(schema::CxiCredentials::Reader in);
void set_peers(capnp::List<schema::PeerInfo>::Builder out, const std::vector<PeerInfo>& peers);
std::vector<PeerInfo> peers_of(capnp::List<schema::PeerInfo>::Reader in);

// The request, addressed to node `request.node_index` (marked secret when it holds a CXI key:
// its arena is wiped when it goes).
rpc::Outgoing launch_request(const LaunchRequest& request);
Result<LaunchRequest> decode_launch_request(schema::LaunchProcessesRequest::Reader in);

// The request for a child in a relayed launch: the one this node got, addressed to node
// `node_index`.
rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index);

}  // namespace lattice::wire
