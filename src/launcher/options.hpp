// `lattice launch` command line -> LaunchOptions. Pure: parsing and validation only, so every
// flag and every error message is unit-tested without starting anything.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "base/strings.hpp"
#include "proc/cpu_binding.hpp"
#include "wire/pmi_mode.hpp"

namespace lattice::launcher {

enum class Distribution { block, cyclic };

// --input's "all" and "none" (LaunchProcessesRequest.inputRank says the same).
inline constexpr int kInputAll = -1;
inline constexpr int kInputNone = -2;

// One program and its ranks: the whole launch, or one of mpiexec's ':' segments (MPMD), whose
// ranks follow the previous segments' in one MPI_COMM_WORLD.
struct App {
  int ntasks = 0;  // -n; 0 = derive (one app: from nodes x tasks per node, else 1; MPMD: 1)
  std::vector<std::pair<std::string, std::string>> env;  // --env: this app's ranks only
  std::string program;
  std::vector<std::string> args;
  // Its ranks as one segment of several: -n, or 1 without it (as under mpiexec).
  int segment_ranks() const { return ntasks > 0 ? ntasks : 1; }
};

struct LaunchOptions {
  std::vector<App> apps;   // never empty once parsed; more than one: MPMD
  int nodes = 0;           // 0 = derive (agents given: as many as needed; local: 1)
  int tasks_per_node = 0;  // 0 = spread evenly
  Distribution distribution = Distribution::block;
  bool label = false;
  wire::PmiMode pmi = wire::PmiMode::automatic;  // --pmi; lattice alloc's batch step: none
  bool hatch_command = false;     // lattice-mpi-launcher's command in an allocation (door_exec.hpp)
  uint32_t fence_timeout_ms = 0;  // 0 = the agents' default
  uint32_t fanout = 0;            // 0 = the agents' default
  // --agents [NAME=]HOST:PORT,...: running agents (empty = local mode). A NAME is the node id
  // the agent must prove; without one the launcher learns it from the handshake.
  struct Agent {
    std::string name;  // "" = not known in advance
    HostPort address;
  };
  std::vector<Agent> agents;
  bool slurm_compat = false;
  bool pmi_port = false;
  bool verbose = false;
  std::string key_file;          // --key-file; empty: $LATTICE_KEY_FILE (main decides)
  std::string user;              // --user NAME|UID; empty: the invoking user
  std::string exports = "ALL";   // --export ALL|NONE|NAME[,NAME=VALUE,PATTERN...]
  uint64_t time_limit_ms = 0;    // -t/--time; 0 = none (main falls back to MPIEXEC_TIMEOUT)
  bool kill_on_bad_exit = true;  // -K/--kill-on-bad-exit[=0|1]
  proc::CpuBind cpu_bind;        // --cpu-bind
  std::string sched = "auto";    // --sched auto|normal|batch
  std::string launch = "auto";   // --launch auto|star|tree (fan_out.hpp: relayed launches)
  int input_rank = 0;            // -i/--input: a rank, kInputAll or kInputNone (srun's default: 0)
  std::string alloc;             // --alloc ID (LATTICE_ALLOC_ID); empty: the launch id
  std::string chdir;             // --chdir DIR; empty: the launcher's working directory
  std::string output, error;     // --output / --error PATTERN (srun's %t %n %j); empty: terminal
  // CXI credentials (Slingshot) from the fabric manager; each overrides --config's fabric keys.
  uint32_t vni = 0;               // --vni; 0: the config's, else no CXI
  std::string fabric_url;         // --fabric-url
  std::string fabric_token_file;  // --fabric-token-file
  std::string config_file;        // --config; empty: $LATTICE_LAUNCHER_CONFIG, else none

  // The ranks asked for: the one app's -n (0 = derive), or every segment's (at least 1 each).
  int ntasks() const;
};

// srun's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS -> milliseconds (> 0).
Result<uint64_t> parse_time_limit(const std::string& text);

// MPIEXEC_TIMEOUT's value, as mpiexec honours it (MPICH's own test suite sets it): whole
// seconds, more than 0, at most a year -> milliseconds.
Result<uint64_t> parse_mpiexec_timeout(const std::string& text);

// --agents' value: [NAME=]HOST:PORT,...
Result<std::vector<LaunchOptions::Agent>> parse_agents(const std::string& list);

// --pmi's value: auto, pmi2 or pmix.
Result<wire::PmiMode> parse_pmi_mode(const std::string& value);

// argv after "launch". Errors name the flag and what it wanted.
Result<LaunchOptions> parse_launch_options(const std::vector<std::string>& argv);

extern const char* const kLaunchUsage;

}  // namespace lattice::launcher
