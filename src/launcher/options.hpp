// `lattice launch` command line -> LaunchOptions. Pure: parsing and validation only, so every
// flag and every error message is unit-tested without starting anything. The model and its value
// parsers live here (options.cpp); the command line's wiring (CLI11, srun's and mpiexec's
// spellings) in launch_cli.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "base/strings.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"
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
  bool cpu_bind_given = false;   // else with -c each rank is bound to its own CPUs (threads)
  int cpus_per_task = 0;         // -c/--cpus-per-task; 0: not given
  proc::GpuRequest gpus;         // --gpus-per-task, --gpus-per-node, --gpu-bind
  std::string sched = "auto";    // --sched auto|normal|batch
  std::string launch = "auto";   // --launch auto|star|tree (fan_out.hpp: relayed launches)
  int input_rank = 0;            // -i/--input: a rank, kInputAll or kInputNone (srun's default: 0)
  std::string alloc;             // --alloc ID (LATTICE_ALLOC_ID); empty: the launch id
  std::string chdir;             // --chdir DIR; empty: the launcher's working directory
  std::string output, error;     // --output / --error PATTERN (srun's %t %n %j); empty: terminal
  bool append_output = false;    // --open-mode=append: the files are appended to, not truncated
  bool unbuffered = false;       // -u: output goes on as the agents read it, not line by line
  // --signal=SIG[@SECONDS]: SIG to the ranks SECONDS (default 60) before the time limit.
  int warn_signal = 0;  // 0: none
  uint64_t warn_before_ms = 0;
  // CXI credentials (Slingshot) from the fabric manager; each overrides --config's fabric keys.
  uint32_t vni = 0;               // --vni; 0: the config's, else no CXI
  std::string fabric_url;         // --fabric-url
  std::string fabric_token_file;  // --fabric-token-file
  std::string config_file;        // --config; empty: $LATTICE_LAUNCHER_CONFIG, else none
  // Memory for the launch's processes on each node together, enforced by its cgroup there:
  // --mem (0: none; srun's --mem=0, all of the node's, is none too), or --mem-per-cpu times
  // the CPUs its ranks use on that node. At most one is given.
  uint64_t memory_bytes = 0;
  uint64_t memory_per_cpu = 0;
  bool exclusive = false;  // --exclusive: no other launch runs on its nodes while it does
  std::string job_name;    // -J/--job-name: shown with the launch id (-v, admin status)
  bool quiet = false;      // -Q/--quiet: no informational lines, errors still
  // -w/--nodelist, -x/--exclude (Slurm host lists of node ids; mpiexec's -hosts is -w): which of
  // the agents given (--agents NAME=.., or the allocation's nodes) the launch uses.
  std::string nodelist, exclude;
  std::string hostfile;  // mpiexec's -f FILE: node ids, one a line (main reads it into nodelist)
  // srun's --multi-prog: the program is a file of "RANKS PROGRAM ARGS" lines; mpiexec's
  // -configfile FILE: a file of segments. Main reads either (program_files.hpp).
  bool multi_prog = false;
  std::string configfile;
  // mpiexec's -genv K V: every segment's ranks (a segment's own --env wins).
  std::vector<std::pair<std::string, std::string>> global_env;
  bool help = false;  // -h/--help: print kLaunchUsage, nothing else

  // The ranks asked for: the one app's -n (0 = derive), or every segment's (at least 1 each).
  int ntasks() const;
  // Puts global_env into every app's env, after names the app sets itself.
  void add_global_env();
};

// The value parsers of the options below, each a pure function of the option's value; errors
// start with `flag`.
Result<int> parse_count(const std::string& flag, const std::string& value, int max);
// pmi2, pmix, and srun's --mpi names pmix_v2..pmix_v5.
Result<wire::PmiMode> parse_pmi(const std::string& value);
// --env's and -genv's K=V.
Result<std::pair<std::string, std::string>> parse_env(const std::string& flag,
                                                      const std::string& value);

// srun's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS -> milliseconds (> 0).
Result<uint64_t> parse_time_limit(const std::string& text);

// MPIEXEC_TIMEOUT's value, as mpiexec honours it (MPICH's own test suite sets it): whole
// seconds, more than 0, at most a year -> milliseconds.
Result<uint64_t> parse_mpiexec_timeout(const std::string& text);

// --signal's value, srun's SIG[@SECONDS] (SIG a name or number; SECONDS by default 60).
struct WarnSignal {
  int signal = 0;
  uint64_t before_ms = 0;
};
Result<WarnSignal> parse_warn_signal(const std::string& text);

// --open-mode's value: true for append, false for truncate.
Result<bool> parse_open_mode(const std::string& text);

// --mem's and --mem-per-cpu's value (`flag`): srun's sizes (K, M (the default), G, T) -> bytes;
// "0" is --mem's "all of the node's memory": no limit.
Result<uint64_t> parse_launch_memory(std::string_view flag, const std::string& text);

// --agents' value: [NAME=]HOST:PORT,...
Result<std::vector<LaunchOptions::Agent>> parse_agents(const std::string& list);

// argv after "launch". Errors name the flag and what it wanted, in one line; an unknown option
// names the nearest known one. srun's and mpiexec's spellings are taken (launch_cli.cpp).
Result<LaunchOptions> parse_launch_options(const std::vector<std::string>& argv);

// A segment's own options and program, as after ':' on the command line or on a line of
// mpiexec's -configfile (-n/-np, --env/-env); the program's arguments run to the end.
// `segment`: its number from 1, for errors.
struct Segment {
  App app;
  bool has_program = false;  // a word where the program goes (maybe "", which is none)
};
Result<Segment> parse_segment(const std::vector<std::string>& words, size_t segment);

extern const char* const kLaunchUsage;

}  // namespace lattice::launcher
