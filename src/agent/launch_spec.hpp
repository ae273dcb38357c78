// A LaunchProcesses request (decoded by wire/launch_request) judged by this agent: validated
// against its own limits and users, so that nothing past this point trusts the launcher's
// numbers. Block layouts given as tasksPerNode/firstRank, and the compact forms of the peers
// and the layout, are expanded here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/peer_table.hpp"
#include "base/result.hpp"
#include "config/fence_defaults.hpp"
#include "fence/tree.hpp"
#include "pmix/app_setup_codec.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"
#include "proc/resource_limits.hpp"
#include "secure/secret.hpp"
#include "wire/launch_request.hpp"

namespace lattice::agent {

// Who the ranks run as (lattice-rank-exec switches to it when the agent runs as root).
using JobUser = wire::JobUser;

// One program of the launch; an MPMD launch (mpiexec's ':') has several, numbered through in
// order. Its index is its ranks' appnum.
struct App {
  std::string entrypoint;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // its own, over LaunchSpec::env
  int first_rank = 0;
  int size = 0;
};

// The launch's Slingshot CXI credentials: the key as the hex its ranks get, NUL-terminated, in
// guarded memory; wiped when the launch ends (Launch::end) or the spec goes away.
struct CxiCredentials {
  uint32_t vni = 0;
  uint32_t svc_id = 0;
  secure::Secret auth_key_hex;
};

// How ranks are scheduled (lattice launch --sched). SCHED_BATCH ranks do not preempt on waking:
// where there are more ranks than CPUs, the agent then answers every rank that is ready
// before it yields, instead of one per turn; elsewhere ranks keep the usual policy, whose
// wake-up preemption a latency-bound thread (an MPI progress thread) may need.
using RankScheduling = wire::RankScheduling;

struct LaunchSpec {
  std::string launch_id;
  std::string allocation_id;
  std::vector<App> apps;  // never empty after decoding; their sizes add up to world_size
  int world_size = 0;
  int node_index = 0;
  int head_node = 0;
  std::vector<int> rank_nodes;                           // node index of every rank
  PeerTable peers;                                       // one per node; never empty after decoding
  std::vector<std::pair<std::string, std::string>> env;  // every app's (and escape-hatch commands')
  // Hooks a root job was not given (proc::leave_out_hooks) of what --export harvested.
  std::vector<std::string> env_left_out;
  uint32_t fence_timeout_ms = 0;
  uint32_t fanout = 0;
  bool slurm_compat = false;
  bool use_pmi_port = false;
  wire::PmiMode pmi = wire::PmiMode::pmi;  // how its ranks wire up (wire_up.hpp)
  bool hatch_command = false;              // an allocation's MPI launcher's command (launch_hatch)
  std::string workdir;
  JobUser user;
  uint64_t time_limit_ms = 0;  // 0 = none
  int warn_signal = 0;         // srun's --signal: this signal warn_before_ms before the limit
  uint64_t warn_before_ms = 0;
  bool kill_on_bad_exit = true;
  bool unbuffered = false;  // srun -u: output is passed on as read, not line by line
  int input_rank = 0;       // whose stdin the launcher feeds: a rank, -1 all, -2 none
  proc::CpuBind cpu_bind;
  int cpus_per_task = 0;  // -c: each rank's own CPUs (0: not given)
  proc::GpuRequest gpus;
  RankScheduling sched = RankScheduling::automatic;
  std::optional<CxiCredentials> cxi;  // none: the launch runs without CXI
  // RFC0029: the launcher's PMIx_server_setup_application data, checked (pmix/app_setup.hpp).
  std::vector<pmix::SetupEntry> pmix_setup;
  // What ranks take from the launcher, as this agent propagates it (srun's umask and
  // PropagateResourceLimits); none: the agent's own.
  std::optional<uint32_t> umask;
  std::vector<proc::Limit> limits;
  // Relayed down the fence tree (launch_relay.hpp): from the launcher to the head, from each
  // agent to its children; `launcher_name` is the launcher's handshake name.
  bool relayed = false;
  std::string launcher_name;
  // Memory for the launch's processes on this node together (its cgroup's limit): --mem, or
  // --mem-per-cpu times the CPUs its ranks here use; 0: none.
  uint64_t memory_bytes = 0;
  bool exclusive = false;  // no other launch runs on this node while it does (exclusive.hpp)
  bool gets_input(int rank) const { return input_rank == -1 || input_rank == rank; }

  int nnodes() const { return static_cast<int>(peers.size()); }
  // The fence tree over the launch's nodes, the same on every agent (fences and relays).
  fence::Tree fence_tree() const;
  std::vector<int> local_ranks() const;  // global ranks on this node, ascending
  // Whether this node's ranks start under SCHED_BATCH, on a node where they may use `cpus`.
  bool ranks_batch(size_t local_ranks, size_t cpus) const;
  int app_of(int rank) const;  // index into apps of the app that holds `rank`
};

// What the receiving agent is and allows: a request is judged against these.
struct LaunchDefaults {
  std::string node_id;  // this agent's; used when the request names no peers (single node)
  uint32_t fence_timeout_ms = config::kDefaultFenceTimeoutMs;
  bool slurm_compat = false;
  // Bounds on what one request may make this agent allocate and fork.
  uint32_t max_world_size = 1u << 20;
  uint32_t max_ranks_per_node = 1024;
  // Whose jobs this agent may run: as root any user's (uid 0 only when allowed); otherwise only
  // its own user's.
  uint32_t agent_uid = 0;
  bool allow_root_jobs = false;
  // The launcher's resource limits ranks get (jobs.propagate_limits).
  std::vector<proc::Resource> propagated = proc::parse_propagated("ALL").value();
  std::vector<std::string> root_env_allowed;  // security.allow_root_job_env
};
// Launch ids end up in file names (the per-launch PMI socket): short and path-safe only.
inline constexpr size_t kMaxLaunchIdLength = 64;

// The memory limit of a launch on a node where it has `local_ranks` ranks (LaunchSpec's
// memory_bytes: --mem, or --mem-per-cpu times its ranks' CPUs, -c each), or why the request's is
// refused (both forms, or too large to count).
Result<uint64_t> node_memory_limit(const wire::LaunchRequest& request, size_t local_ranks);

// The request judged against `defaults`: the launch as this agent runs it, or why it refuses.
Result<LaunchSpec> make_launch_spec(const wire::LaunchRequest& request,
                                    const LaunchDefaults& defaults);

}  // namespace lattice::agent
