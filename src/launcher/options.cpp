#include "launcher/options.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "launcher/alloc_options.hpp"
#include "proc/exit_status.hpp"

namespace lattice::launcher {

const char* const kLaunchUsage =
    "usage: lattice launch [options] PROGRAM [ARGS...] [: -n N [--env K=V] PROGRAM [ARGS...]]...\n"
    "  (each ':' starts another program of the same MPI_COMM_WORLD, mpiexec's MPMD form)\n"
    "  -n, --ntasks N            number of ranks (also -np N)\n"
    "  -N, --nodes N             number of nodes (agents)\n"
    "      --tasks-per-node T    ranks per node (block layout: node i gets ranks i*T..i*T+T-1;\n"
    "                            also --ntasks-per-node, -ppn)\n"
    "  -w, --nodelist LIST       run on these of the agents (node ids, Slurm host list: n[1-4])\n"
    "  -x, --exclude LIST        run on none of these\n"
    "      --distribution D      block (default) or cyclic\n"
    "  -l, --label               prefix every output line with 'RANK: '\n"
    "      --env K=V             set a variable in the environment of this program's ranks\n"
    "                            (repeatable)\n"
    "      --export=WHAT         what of this environment ranks get: ALL (default), NONE, or\n"
    "                            NAME[,NAME...] (wildcards * ?; NAME=VALUE sets a value)\n"
    "      --user NAME|UID       run the ranks as this user (agents running as root switch)\n"
    "      --key-file FILE       the cluster key (default $LATTICE_KEY_FILE; local mode makes\n"
    "                            its own)\n"
    "      --pmi auto|pmi2|pmix  wire-up (default auto: PMIx for Open MPI, PMI-1/PMI-2 for\n"
    "                            MPICH, both for a script; pmi2 serves PMI-1 and PMI-2;\n"
    "                            also --mpi=pmi2|pmix|pmix_v3|pmix_v4)\n"
    "      --fence-timeout SEC   fail a fence that is not complete after SEC seconds\n"
    "      --fanout K            fence tree fanout between agents\n"
    "      --launch auto|star|tree  how the launch reaches the agents: star, a link to each;\n"
    "                            tree, a link to the head agent, which passes it down the\n"
    "                            fence tree (and the reports up); auto (default): tree from\n"
    "                            16 nodes when every node id is known\n"
    "      --agents [N=]H:P[,..] use running agents (N: the node id each must prove; given for\n"
    "                            all, requests go out as each agent authenticates); otherwise\n"
    "                            start local ones on loopback\n"
    "      --slurm-compat        also export SLURM_PROCID, SLURM_NPROCS, ... to ranks\n"
    "      --pmi-port            ranks dial PMI_PORT (+PMI_ID) instead of inheriting PMI_FD\n"
    "  -t, --time LIMIT          time limit (srun's MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]): then\n"
    "                            SIGTERM, a grace, SIGKILL, exit 124; default $MPIEXEC_TIMEOUT s\n"
    "  -K, --kill-on-bad-exit[=0|1]  0: a rank's non-zero exit ends only that rank (default 1)\n"
    "  -i, --input none|all|RANK  whose stdin gets the launcher's (default 0; others: /dev/null)\n"
    "  -c, --cpus-per-task N     N CPUs of its own for each rank: the layout counts them, each\n"
    "                            rank is bound to them and gets OMP_NUM_THREADS=N\n"
    "      --cpu-bind KIND       bind each rank: none (default without -c), threads (default\n"
    "                            with -c), cores, sockets, ldoms, map_cpu:LIST, mask_cpu:LIST\n"
    "      --gpus-per-task N     N GPUs of its own for each rank (CUDA_VISIBLE_DEVICES,\n"
    "                            ROCR_VISIBLE_DEVICES or ZE_AFFINITY_MASK)\n"
    "      --gpus-per-node N     N GPUs on each node, which all its ranks see\n"
    "      --gpu-bind closest|none|map_gpu:LIST  closest: GPUs on the rank's NUMA node first;\n"
    "                            none: every rank sees all the launch's GPUs on its node\n"
    "      --sched auto|normal|batch  ranks' scheduling: batch is SCHED_BATCH; auto (default)\n"
    "                            is batch on nodes with more ranks than CPUs, else normal\n"
    "      --alloc ID            run in allocation ID (default: $LATTICE_ALLOC_ID; no --agents: no "
    "key,\n"
    "                            through the node agent's user door)\n"
    "  -D, --chdir DIR           ranks start in DIR (default: the current directory)\n"
    "  -J, --job-name NAME       the launch's name (-v, admin status, SLURM_JOB_NAME)\n"
    "  -Q, --quiet               no informational lines (errors still)\n"
    "      --multi-prog          PROGRAM is srun's MPMD file: lines 'RANKS PROGRAM ARGS'\n"
    "      --mem SIZE            memory for the launch's processes on each node together\n"
    "                            (K, M (default), G, T; 0: no limit): its cgroup's limit there\n"
    "      --mem-per-cpu SIZE    the same, per CPU its ranks use on each node\n"
    "      --exclusive           no other launch on its nodes while it runs (refused where one\n"
    "                            runs)\n"
    "  -o, --output PATTERN      ranks' stdout into files: %t rank, %n node, %j launch id\n"
    "  -e, --error PATTERN       ranks' stderr likewise (default: --output's file)\n"
    "      --open-mode MODE      truncate (default) or append to --output/--error's files\n"
    "  -u, --unbuffered          pass output on as ranks write it, not line by line\n"
    "      --signal SIG[@SECS]   send SIG to the ranks SECS (default 60) before the time limit\n"
    "      --vni N               Slingshot VNI: get the launch's CXI service and key from the\n"
    "                            fabric manager and give them to the ranks (FI_CXI_*)\n"
    "      --fabric-url URL      the fabric manager's REST API (or fabric.url in --config)\n"
    "      --fabric-token-file F its bearer token, a file only its owner may read\n"
    "      --config FILE         the launcher's configuration (default $LATTICE_LAUNCHER_CONFIG)\n"
    "  -v, --verbose             print a timing breakdown at the end\n"
    "  mpiexec's spellings: -np -ppn -hosts -f FILE -genv K V -genvall -genvnone -envlist\n"
    "  -bind-to -map-by -prepend-rank -outfile-pattern -errfile-pattern -wdir -configfile FILE\n"
    "  (lattice(1) maps srun's, mpiexec's and mpirun's options to these)\n";

Result<int> parse_count(const std::string& flag, const std::string& value, int max) {
  auto n = parse_int(value);
  if (!n || *n < 1 || *n > max)
    return make_error(
        cat(flag, ": expected a whole number from 1 to ", max, ", got '", value, "'"));
  return static_cast<int>(*n);
}

Result<wire::PmiMode> parse_pmi(const std::string& value) {
  if (value == "auto") return wire::PmiMode::automatic;
  if (value == "pmi2") return wire::PmiMode::pmi;
  for (const char* pmix : {"pmix", "pmix_v2", "pmix_v3", "pmix_v4", "pmix_v5"})
    if (value == pmix) return wire::PmiMode::pmix;
  return make_error(cat("--pmi: auto, pmi2 or pmix, got '", value, "'"));
}

Result<std::pair<std::string, std::string>> parse_env(const std::string& flag,
                                                      const std::string& value) {
  auto eq = value.find('=');
  if (eq == std::string::npos || eq == 0)
    return make_error(cat(flag, ": expected K=V, got '", value, "'"));
  return std::make_pair(value.substr(0, eq), value.substr(eq + 1));
}

int LaunchOptions::ntasks() const {
  if (apps.size() == 1) return apps.front().ntasks;
  int total = 0;
  for (const auto& app : apps) total += app.segment_ranks();
  return total;
}

void LaunchOptions::add_global_env() {
  for (auto& app : apps) {
    std::vector<std::pair<std::string, std::string>> env;
    for (const auto& global : global_env)
      if (std::none_of(app.env.begin(), app.env.end(),
                       [&](const auto& e) { return e.first == global.first; }))
        env.push_back(global);
    env.insert(env.end(), app.env.begin(), app.env.end());
    app.env = std::move(env);
  }
}

Result<uint64_t> parse_time_limit(const std::string& text) {
  auto bad = [&] {
    return make_error(
        cat("expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, got '", text, "'"));
  };
  uint64_t days = 0;
  std::string rest = text;
  bool has_days = false;
  if (auto dash = text.find('-'); dash != std::string::npos) {
    auto d = parse_int(text.substr(0, dash));
    // Bounded before it is multiplied: 213503982334602 days of seconds wrap to 17 hours.
    if (!d || *d < 0) return bad();
    if (*d > 366) return make_error(cat("a time limit over a year: '", text, "'"));
    days = static_cast<uint64_t>(*d);
    rest = text.substr(dash + 1);
    has_days = true;
  }
  std::vector<uint64_t> parts;
  for (const auto& piece : split(rest, ':')) {
    auto v = parse_int(piece);
    if (!v || *v < 0 || *v > 1000000) return bad();
    parts.push_back(static_cast<uint64_t>(*v));
  }
  if (parts.empty() || parts.size() > 3) return bad();
  // Without days: MM, MM:SS, HH:MM:SS. With days: D-HH, D-HH:MM, D-HH:MM:SS.
  uint64_t seconds = 0;
  if (has_days) {
    uint64_t units[] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * units[i];
    seconds += days * 86400;
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];
  } else {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  if (seconds == 0) return make_error(cat("a time limit must be longer than 0, got '", text, "'"));
  if (seconds > 366ull * 86400) return make_error(cat("a time limit over a year: '", text, "'"));
  return seconds * 1000;
}

Result<uint64_t> parse_mpiexec_timeout(const std::string& text) {
  auto secs = parse_int(text);
  if (!secs || *secs < 1 || *secs > 366 * 86400)
    return make_error(cat("MPIEXEC_TIMEOUT: expected seconds > 0, got '", text, "'"));
  return static_cast<uint64_t>(*secs) * 1000;
}

Result<WarnSignal> parse_warn_signal(const std::string& text) {
  auto at = text.find('@');
  std::string name = text.substr(0, at);
  if (name.find(':') != std::string::npos)
    return make_error(cat("--signal: srun's R: and B: forms are not supported, got '", text, "'"));
  WarnSignal out{proc::signal_number(name), 60000};
  if (!out.signal)
    return make_error(cat("--signal: expected SIG[@SECONDS] (SIG a name such as USR1, or a ",
                          "number), got '", text, "'"));
  if (at != std::string::npos) {
    auto secs = parse_int(text.substr(at + 1));
    if (!secs || *secs < 0 || *secs > 0xffff)
      return make_error(
          cat("--signal: expected whole seconds from 0 to 65535 after '@', got '", text, "'"));
    out.before_ms = static_cast<uint64_t>(*secs) * 1000;
  }
  return out;
}

Result<bool> parse_open_mode(const std::string& text) {
  if (text == "append" || text == "a") return true;
  if (text == "truncate" || text == "t") return false;
  return make_error(cat("--open-mode: append or truncate, got '", text, "'"));
}

Result<uint64_t> parse_launch_memory(std::string_view flag, const std::string& text) {
  if (flag == "--mem" && text == "0") return uint64_t{0};
  return parse_memory(text, flag);
}

Result<std::vector<LaunchOptions::Agent>> parse_agents(const std::string& list) {
  std::vector<LaunchOptions::Agent> out;
  for (const auto& item : split(list, ',')) {
    auto eq = item.find('=');
    std::string name = eq == std::string::npos ? "" : item.substr(0, eq);
    auto hp = parse_host_port(eq == std::string::npos ? item : item.substr(eq + 1));
    if (!hp || hp->port == 0 || (eq != std::string::npos && name.empty()))
      return make_error(
          cat("--agents: expected [NAME=]HOST:PORT[,[NAME=]HOST:PORT...], got '", item, "'"));
    out.push_back(LaunchOptions::Agent{name, *hp});
  }
  return out;
}

}  // namespace lattice::launcher
