#include "launcher/options.hpp"

#include <algorithm>
#include <cmath>

#include "config/config.hpp"
#include "launcher/output_files.hpp"
#include "proc/cpu_binding.hpp"

namespace lattice::launcher {

const char* const kLaunchUsage =
    "usage: lattice launch [options] PROGRAM [ARGS...] [: -n N [--env K=V] PROGRAM [ARGS...]]...\n"
    "  (each ':' starts another program of the same MPI_COMM_WORLD, mpiexec's MPMD form)\n"
    "  -n, --ntasks N            number of ranks\n"
    "  -N, --nodes N             number of nodes (agents)\n"
    "      --tasks-per-node T    ranks per node (block layout: node i gets ranks i*T..i*T+T-1)\n"
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
    "                            MPICH, both for a script; pmi2 serves PMI-1 and PMI-2)\n"
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
    "      --cpu-bind none|cores|sockets|map_cpu:LIST  bind each rank's CPUs (default none)\n"
    "      --sched auto|normal|batch  ranks' scheduling: batch is SCHED_BATCH; auto (default)\n"
    "                            is batch on nodes with more ranks than CPUs, else normal\n"
    "      --alloc ID            run in allocation ID (default: $LATTICE_ALLOC_ID; no --agents: no "
    "key,\n"
    "                            through the node agent's user door)\n"
    "      --chdir DIR           ranks start in DIR (default: the current directory)\n"
    "  -o, --output PATTERN      ranks' stdout into files: %t rank, %n node, %j launch id\n"
    "  -e, --error PATTERN       ranks' stderr likewise (default: --output's file)\n"
    "      --vni N               Slingshot VNI: get the launch's CXI service and key from the\n"
    "                            fabric manager and give them to the ranks (FI_CXI_*)\n"
    "      --fabric-url URL      the fabric manager's REST API (or fabric.url in --config)\n"
    "      --fabric-token-file F its bearer token, a file only its owner may read\n"
    "      --config FILE         the launcher's configuration (default $LATTICE_LAUNCHER_CONFIG)\n"
    "  -v, --verbose             print a timing breakdown at the end\n";

namespace {

Result<int> positive(const std::string& flag, const std::string& value, int max) {
  auto n = parse_int(value);
  if (!n || *n < 1 || *n > max)
    return make_error(
        cat(flag, ": expected a whole number from 1 to ", max, ", got '", value, "'"));
  return static_cast<int>(*n);
}

}  // namespace

int LaunchOptions::ntasks() const {
  if (apps.size() == 1) return apps.front().ntasks;
  int total = 0;
  for (const auto& app : apps) total += app.segment_ranks();
  return total;
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

Result<wire::PmiMode> parse_pmi_mode(const std::string& value) {
  if (value == "auto") return wire::PmiMode::automatic;
  if (value == "pmi2") return wire::PmiMode::pmi;
  if (value == "pmix") return wire::PmiMode::pmix;
  return make_error(cat("--pmi: auto, pmi2 or pmix, got '", value, "'"));
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

Result<LaunchOptions> parse_launch_options(const std::vector<std::string>& argv) {
  LaunchOptions o;
  o.apps.emplace_back();
  constexpr int kMaxCount = 1 << 20;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    App& app = o.apps.back();
    // The program (after "--" even if it starts with '-'): its arguments run to a lone ':',
    // which starts the next segment (as mpiexec's; a program cannot get ':' as an argument).
    if (arg.empty() || arg[0] != '-' || arg == "--") {
      size_t first = arg == "--" ? i + 1 : i;
      if (first >= argv.size()) break;
      auto colon = std::find(argv.begin() + static_cast<long>(first), argv.end(), ":");
      if (argv[first] == ":")
        return make_error(cat("':' with no program before it (segment ", o.apps.size(), ")"));
      app.program = argv[first];
      app.args.assign(argv.begin() + static_cast<long>(first) + 1, colon);
      if (colon == argv.end()) break;
      o.apps.emplace_back();
      i = static_cast<size_t>(colon - argv.begin());
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = arg.find('='); starts_with(arg, "--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    } else if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' &&
               (arg[1] == 'n' || arg[1] == 'N' || arg[1] == 't' || arg[1] == 'K')) {  // -n4, -K0
      value = arg.substr(2);
      arg = arg.substr(0, 2);
      inline_value = true;
    }
    auto take = [&]() -> Result<std::string> {
      if (inline_value) return value;
      if (i + 1 >= argv.size()) return make_error(cat(arg, " needs a value"));
      return argv[++i];
    };
    auto flag_only = [&]() -> Status {
      if (inline_value) return make_error(cat(arg, " takes no value"));
      return {};
    };

    // A segment after ':' has its own -n and --env; everything else is the launch's.
    if (o.apps.size() > 1 && arg != "-n" && arg != "--ntasks" && arg != "--env")
      return make_error(cat("'", arg, "' after ':': a segment takes only -n and --env (give ",
                            "launch options before the first program)"));

    if (arg == "-n" || arg == "--ntasks" || arg == "-N" || arg == "--nodes" ||
        arg == "--tasks-per-node" || arg == "--fanout") {
      auto v = take();
      if (!v) return v.error();
      auto n =
          positive(arg, *v, arg == "--fanout" ? static_cast<int>(config::kMaxFanout) : kMaxCount);
      if (!n) return n.error();
      (arg == "-n" || arg == "--ntasks")  ? app.ntasks = *n
      : (arg == "-N" || arg == "--nodes") ? o.nodes = *n
      : (arg == "--tasks-per-node")       ? o.tasks_per_node = *n
                                          : o.fanout = static_cast<uint32_t>(*n);
    } else if (arg == "-t" || arg == "--time") {
      auto v = take();
      if (!v) return v.error();
      auto ms = parse_time_limit(*v);
      if (!ms) return make_error(cat(arg, ": ", ms.error().message));
      o.time_limit_ms = *ms;
    } else if (arg == "-K" || arg == "--kill-on-bad-exit") {
      // srun's form: the value is optional and only ever attached (-K0, --kill-on-bad-exit=0).
      if (!inline_value || value == "1")
        o.kill_on_bad_exit = true;
      else if (value == "0")
        o.kill_on_bad_exit = false;
      else
        return make_error(cat(arg, ": 0 or 1, got '", value, "'"));
    } else if (arg == "--cpu-bind") {
      auto v = take();
      if (!v) return v.error();
      auto bind = proc::parse_cpu_bind(*v);
      if (!bind) return bind.error();
      o.cpu_bind = std::move(bind.value());
    } else if (arg == "--sched") {
      auto v = take();
      if (!v) return v.error();
      if (*v != "auto" && *v != "batch" && *v != "normal")
        return make_error(cat("--sched: auto, normal or batch, got '", *v, "'"));
      o.sched = *v;
    } else if (arg == "--launch") {
      auto v = take();
      if (!v) return v.error();
      if (*v != "auto" && *v != "star" && *v != "tree")
        return make_error(cat("--launch: auto, star or tree, got '", *v, "'"));
      o.launch = *v;
    } else if (arg == "-i" || arg == "--input") {
      auto v = take();
      if (!v) return v.error();
      if (*v == "none" || *v == "all") {
        o.input_rank = *v == "none" ? kInputNone : kInputAll;
      } else {
        auto rank = parse_int(*v);
        if (!rank || *rank < 0 || *rank >= kMaxCount)
          return make_error(cat(arg, ": none, all or a rank number, got '", *v, "'"));
        o.input_rank = static_cast<int>(*rank);
      }
    } else if (arg == "--vni") {
      auto v = take();
      if (!v) return v.error();
      auto n = positive(arg, *v, 65535);
      if (!n) return n.error();
      o.vni = static_cast<uint32_t>(*n);
    } else if (arg == "--fabric-url" || arg == "--fabric-token-file" || arg == "--config") {
      auto v = take();
      if (!v) return v.error();
      if (v->empty()) return make_error(cat(arg, " needs a value"));
      if (arg == "--fabric-url" && !starts_with(*v, "http://") && !starts_with(*v, "https://"))
        return make_error(cat(arg, ": expected an http:// or https:// URL, got '", *v, "'"));
      (arg == "--fabric-url" ? o.fabric_url
       : arg == "--config"   ? o.config_file
                             : o.fabric_token_file) = *v;
    } else if (arg == "--alloc" || arg == "--chdir") {
      auto v = take();
      if (!v) return v.error();
      if (v->empty()) return make_error(cat(arg, " needs a value"));
      (arg == "--alloc" ? o.alloc : o.chdir) = *v;
    } else if (arg == "-o" || arg == "--output" || arg == "-e" || arg == "--error") {
      auto v = take();
      if (!v) return v.error();
      if (auto checked = expand_output_pattern(*v, 0, 0, "id"); !checked || v->empty())
        return make_error(cat(arg, ": ", checked ? "needs a file name" : checked.error().message));
      (arg == "-o" || arg == "--output" ? o.output : o.error) = *v;
    } else if (arg == "--distribution") {
      auto v = take();
      if (!v) return v.error();
      if (*v == "block")
        o.distribution = Distribution::block;
      else if (*v == "cyclic")
        o.distribution = Distribution::cyclic;
      else
        return make_error(cat("--distribution: block or cyclic, got '", *v, "'"));
    } else if (arg == "--env") {
      auto v = take();
      if (!v) return v.error();
      auto eq = v->find('=');
      if (eq == std::string::npos || eq == 0)
        return make_error(cat("--env: expected K=V, got '", *v, "'"));
      app.env.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (arg == "--pmi") {
      auto v = take();
      if (!v) return v.error();
      auto mode = parse_pmi_mode(*v);
      if (!mode) return mode.error();
      o.pmi = *mode;
    } else if (arg == "--fence-timeout") {
      auto v = take();
      if (!v) return v.error();
      char* end = nullptr;
      double secs = std::strtod(v->c_str(), &end);
      if (v->empty() || *end != '\0' || !(secs > 0) || secs > 86400 * 7)
        return make_error(cat("--fence-timeout: expected seconds > 0, got '", *v, "'"));
      o.fence_timeout_ms = static_cast<uint32_t>(std::ceil(secs * 1000));
    } else if (arg == "--key-file" || arg == "--user" || arg == "--export") {
      auto v = take();
      if (!v) return v.error();
      if (v->empty()) return make_error(cat(arg, " needs a value"));
      (arg == "--key-file" ? o.key_file : arg == "--user" ? o.user : o.exports) = *v;
    } else if (arg == "--agents") {
      auto v = take();
      if (!v) return v.error();
      auto agents = parse_agents(*v);
      if (!agents) return agents.error();
      o.agents.insert(o.agents.end(), agents->begin(), agents->end());
    } else if (arg == "-l" || arg == "--label" || arg == "--slurm-compat" || arg == "-v" ||
               arg == "--verbose" || arg == "--pmi-port") {
      auto ok = flag_only();
      if (!ok) return ok.error();
      bool& target = (arg == "-l" || arg == "--label") ? o.label
                     : arg == "--slurm-compat"         ? o.slurm_compat
                     : arg == "--pmi-port"             ? o.pmi_port
                                                       : o.verbose;
      target = true;
    } else {
      return make_error(cat("unknown option '", arg, "'"));
    }
  }
  if (o.apps.front().program.empty()) return make_error("no program given");
  // An empty argument is a program too, but none that an agent could start.
  for (size_t i = 1; i < o.apps.size(); ++i)
    if (o.apps[i].program.empty())
      return make_error(cat("no program given after ",
                            i + 1 == o.apps.size() ? "the last ':'" : "a ':'", " (segment ", i + 1,
                            ")"));
  long total = 0;
  for (const auto& app : o.apps) total += app.segment_ranks();
  if (total > kMaxCount)
    return make_error(cat("the segments ask for more than ", kMaxCount, " ranks"));
  for (size_t i = 0; i < o.agents.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!o.agents[i].name.empty() && o.agents[i].name == o.agents[j].name)
        return make_error(cat("--agents: node id '", o.agents[i].name, "' is given twice"));
  if (o.launch == "tree")
    for (const auto& agent : o.agents)
      if (agent.name.empty())
        return make_error(
            cat("--launch tree: the launcher reaches only the head agent, so every "
                "agent's node id must be given (NAME=HOST:PORT); ",
                agent.address.host, ':', agent.address.port, " has none"));
  if (!o.agents.empty() && o.nodes > static_cast<int>(o.agents.size()))
    return make_error(
        cat("-N ", o.nodes, " asks for more nodes than the ", o.agents.size(), " agents given"));
  return o;
}

}  // namespace lattice::launcher
