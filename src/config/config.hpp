// The agent's configuration: YAML (conf/agent.yaml documents every key) into a typed struct.
// Errors are values that name the file, the key path and what was wrong; unknown keys are errors
// so that a typo is caught at start-up rather than silently ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/log.hpp"
#include "base/result.hpp"
#include "config/fence_defaults.hpp"
#include "proc/containment.hpp"
#include "proc/gpus.hpp"
#include "proc/resource_limits.hpp"

namespace lattice::config {

struct AgentConfig {
  std::string node_id;  // default: the host name
  // Required (the key `listen` or --listen): this node's management address, which the
  // operator chooses; empty until set.
  std::string listen_host;
  int listen_port = 7400;
  std::string pmi_socket_dir = "/run/lattice";
  // For a request that names no fence timeout (lattice-api's single-request form); lattice
  // launch always names one. The tree's fanout is the launch's alone (fence_defaults.hpp).
  uint32_t fence_timeout_ms = kDefaultFenceTimeoutMs;
  uint32_t heartbeat_interval_ms = 1000;
  uint32_t heartbeat_misses = 3;
  LogLevel log_level = LogLevel::info;
  std::string
      log_file;  // empty: stderr (a service's journal); else appended to, reopened on SIGHUP
  std::string admin_socket = "/run/lattice/agentd.sock";
  // metrics.listen: where Prometheus scrapes GET /metrics over HTTP; empty host: not served.
  std::string metrics_host;
  int metrics_port = 9464;
  bool compat_set_slurm_env = false;
  // security: links need the cluster key; jobs as root only when allowed
  std::string key_file;  // required: the agent refuses to start without one
  // Certified identities (docs/security.md): this node's identity file, and the authority whose
  // certificates every peer must show; both empty: the cluster key alone (the simple mode).
  std::string identity_file;
  std::string certificate_authority;
  std::string revoked;     // security.revoked: static keys no longer trusted (re-read on SIGHUP)
  uint32_t handshake = 3;  // the version this agent opens links with (2 while upgrading 0.2.0)
  bool allow_root_jobs = false;
  // Hooks (interpreter, shell and loader variables) root jobs may still be given: names and
  // fnmatch(3) patterns (docs/security.md, "A root job's environment").
  std::vector<std::string> allow_root_job_env;
  uint32_t handshake_timeout_ms = 5000;
  // limits: what one launch or one peer may make this agent hold
  uint32_t max_ranks_per_node = 1024;
  uint32_t max_world_size = 1u << 20;
  uint32_t max_connections = 1024;
  uint32_t max_handshakes_per_source = 64;  // connections from one source not yet authenticated
  uint32_t idle_timeout_ms = 60000;
  // jobs: what holds a launch's processes together, and what ranks take from the launcher
  proc::ContainmentMode containment = proc::ContainmentMode::automatic;
  std::vector<proc::Resource> propagate_limits = proc::parse_propagated("ALL").value();
  // gpus: this node's GPUs where hwloc sees none (a node whose vendor libraries hwloc was not
  // built with, or a test's made-up GPUs).
  std::vector<proc::Gpu> gpus;
};

// A node id names this agent in every handshake and in LATTICE_NODELIST: 1..255 printable
// ASCII bytes, no spaces and no ','. The reason when it is not, or "".
std::string node_id_problem(std::string_view id);

Result<AgentConfig> parse_config(std::string_view yaml_text, const std::string& source_name);
Result<AgentConfig> load_config_file(const std::string& path);
// The effective configuration in the file's own layout (for --check-config).
std::string describe(const AgentConfig& config);

// A running agent re-reading its configuration (SIGHUP): what it runs with from now on, which
// is `fresh` except for what only a restart can change (its name, addresses, key, directories,
// security and link settings, containment), kept as `running` has it; and those of them that
// differ, for the log.
struct Reload {
  AgentConfig config;
  std::vector<std::string> restart_only;  // key paths, e.g. "listen"
};
Reload reload(const AgentConfig& running, const AgentConfig& fresh);

}  // namespace lattice::config
