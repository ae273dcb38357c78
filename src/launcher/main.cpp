// `lattice`: the launcher CLI. `lattice launch` runs a job through agents (started locally on
// loopback unless --agents names running ones); `lattice admin status` asks an agent how it is.
#include <sys/prctl.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/heap.hpp"
#include "base/log.hpp"
#include "base/open_files.hpp"
#include "base/paths.hpp"
#include "base/suggest.hpp"
#include "lattice_version.h"
#include "launcher/admin_client.hpp"
#include "launcher/alloc_options.hpp"
#include "launcher/allocation_door.hpp"
#include "launcher/allocation_run.hpp"
#include "launcher/cluster_status.hpp"
#include "launcher/export_env.hpp"
#include "launcher/fabric_setup.hpp"
#include "launcher/job.hpp"
#include "launcher/job_user.hpp"
#include "launcher/launch_files.hpp"
#include "launcher/launcher_file.hpp"
#include "launcher/layout.hpp"
#include "launcher/local_agents.hpp"
#include "launcher/options.hpp"
#include "net/loop.hpp"
#include "net/signal.hpp"
#include "proc/cpu_binding.hpp"
#include "rpc/version.hpp"
#include "secure/credentials.hpp"
#include "secure/handshake.hpp"

extern char** environ;

namespace {

using namespace lattice;
using namespace lattice::launcher;

const char* kUsage =
    "usage: lattice launch [options] PROGRAM [ARGS...]   (lattice launch --help)\n"
    "       lattice alloc [options] [--] COMMAND [ARGS...]  (lattice alloc --help)\n"
    "       lattice admin [--socket PATH] status [--json] [LAUNCH_ID] | allocations | metrics |\n"
    "                                     end-allocation ID | drain [REASON] | undrain\n"
    "       lattice admin --agents LIST [--key-file FILE] status [--json] [LAUNCH_ID]\n"
    "       lattice --version\n";

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "lattice: %s\n", message.c_str());
  return code;
}

Result<secure::Credentials> operators_credentials(const std::string& key_option);
std::vector<AgentAddress> given_agents(const std::vector<LaunchOptions::Agent>& given,
                                       size_t count);

// `lattice admin status --agents LIST`: each agent's status, asked with the cluster key.
int cluster_status_main(const AdminArgs& args) {
  auto given = parse_agents(args.agents);
  if (!given) return fail(2, cat("admin: --agents: ", given.error().message));
  auto credentials = operators_credentials(args.key_file);
  if (!credentials) return fail(2, cat("admin: ", credentials.error().message));
  net::Loop loop;
  auto answers = ask_status(loop, credentials.value(), given_agents(*given, given->size()),
                            args.json, args.launch_id);
  std::fputs(admin::render_cluster(answers, args.json).c_str(), stdout);
  bool all = std::all_of(answers.begin(), answers.end(),
                         [](const admin::AgentAnswer& a) { return a.error.empty(); });
  return all ? 0 : 1;
}

int admin_main(const std::vector<std::string>& args) {
  auto parsed = parse_admin_args(args);
  if (!parsed) return fail(2, cat("admin: ", parsed.error().message, " (lattice admin --help)"));
  if (parsed->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parsed->agents.empty()) return cluster_status_main(*parsed);
  const std::string& socket = parsed->socket;
  const std::string& request = parsed->request;
  if (request.empty())
    return fail(2,
                "admin: what to ask? (status, allocations, metrics, end-allocation ID, drain "
                "[REASON], undrain)");
  auto answer = admin_request(socket, request);
  if (!answer) return fail(1, cat("admin: ", answer.error().message));
  std::fputs(answer->text.c_str(), stdout);
  if (answer->cut)
    std::fprintf(stderr, "lattice: admin: the answer was cut at %zu bytes\n",
                 admin::kMaxAnswerBytes);
  return answer->error ? 1 : 0;
}

// The operators' credentials, for --agents: the cluster key `key_option` (--key-file), else
// $LATTICE_KEY_FILE; where the cluster certifies identities, this host's identity file
// ($LATTICE_IDENTITY_FILE) and the authority agents must be certified by
// ($LATTICE_AUTHORITY_FILE).
Result<secure::Credentials> operators_credentials(const std::string& key_option) {
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  std::string key_file = key_option.empty() ? env("LATTICE_KEY_FILE") : key_option;
  if (key_file.empty())
    return make_error(
        "no cluster key: pass --key-file FILE or set LATTICE_KEY_FILE (the file the agents were "
        "given)");
  auto credentials = secure::load_credentials(key_file, env("LATTICE_IDENTITY_FILE"),
                                              env("LATTICE_AUTHORITY_FILE"));
  // Handshake 2 while a cluster upgrades from 0.2.0, whose agents answer nothing else.
  const std::string handshake = env("LATTICE_HANDSHAKE");
  if (credentials && !handshake.empty()) {
    if (handshake != "2" && handshake != "3")
      return make_error(cat("LATTICE_HANDSHAKE: 2 or 3, not '", handshake, "'"));
    credentials->initiate_version = static_cast<uint8_t>(handshake[0] - '0');
  }
  return credentials;
}

// The first `count` agents of --agents, as the links take them.
std::vector<AgentAddress> given_agents(const std::vector<LaunchOptions::Agent>& given,
                                       size_t count) {
  std::vector<AgentAddress> agents;
  for (size_t i = 0; i < count; ++i)
    agents.push_back(AgentAddress{given[i].name.empty() ? given[i].address.host : given[i].name,
                                  given[i].address.host, given[i].address.port,
                                  !given[i].name.empty()});
  return agents;
}

// Local mode: `count` agents started on loopback, and their throwaway key in `key`; then
// `ready`, or `failed` once the reason is said.
void start_local(LocalAgents& local, int count, std::optional<secure::Credentials>& key,
                 std::function<void(std::vector<AgentAddress>)> ready,
                 std::function<void()> failed) {
  local.start(count, [&local, &key, ready = std::move(ready),
                      failed = std::move(failed)](Result<std::vector<AgentAddress>> agents) {
    auto local_key = agents ? secure::ClusterKey::load(local.key_file())
                            : Result<secure::ClusterKey>(agents.error());
    if (!local_key) {
      std::fprintf(stderr, "lattice: %s\n", local_key.error().message.c_str());
      return failed();
    }
    key.emplace(std::move(local_key.value()));  // simple mode: local agents certify nothing
    ready(std::move(agents.value()));
  });
}

// The allocation `options.alloc`, as its agent on this node describes it to this user; the
// launch then runs on its nodes (relayed from this one, the tree's head), as its user.
Result<wire::AllocationInfo> enter_allocation(LaunchOptions& options) {
  if (!options.user.empty())
    return make_error("--user: a launch inside an allocation runs as the allocation's user");
  if (options.vni || !options.fabric_url.empty() || !options.fabric_token_file.empty())
    return make_error(
        "--vni, --fabric-*: inside an allocation, launches get the allocation's CXI "
        "service from the agents");
  auto info = ask_allocation(user_door_path(), options.alloc);
  if (!info) return make_error(cat("allocation ", options.alloc, ": ", info.error().message));
  if (info->user.uid != ::getuid() && ::getuid() != 0)
    return make_error(cat("allocation ", options.alloc, " is ", info->user.name, "'s"));
  options.launch = "tree";  // the door's agent passes the request on to the others
  return info;
}

// -w/-x over --agents: the launch's agents are those chosen. Local agents are started to fit,
// so there is nothing to choose among.
Status choose_agents(LaunchOptions& options) {
  if (options.nodelist.empty() && options.exclude.empty()) return {};
  if (options.agents.empty() && options.alloc.empty() && !std::getenv("LATTICE_ALLOC_ID"))
    return make_error(
        "-w/-x choose among running agents: give --agents NAME=HOST:PORT,... or run in an "
        "allocation");
  if (options.agents.empty()) return {};  // the allocation's nodes (allocation_nodes)
  auto chosen = chosen_nodes(options, given_agents(options.agents, options.agents.size()));
  if (!chosen) return chosen.error();
  std::vector<LaunchOptions::Agent> agents;
  for (const auto& node : *chosen)
    for (const auto& agent : options.agents)
      if (agent.name == node.node_id) agents.push_back(agent);
  options.agents = std::move(agents);
  if (options.nodes > static_cast<int>(options.agents.size()))
    return make_error(cat("-N ", options.nodes, " asks for more nodes than the ",
                          options.agents.size(), " chosen by -w/-x"));
  return {};
}

// The allocation's nodes the launch takes: -w/-x's, then -N's first; the asking agent's node
// stays first (door_nodes: it relays the launch).
Result<std::vector<AgentAddress>> allocation_nodes(const wire::AllocationInfo& info,
                                                   const LaunchOptions& options) {
  auto all =
      door_nodes(info, options.nodelist.empty() && options.exclude.empty() ? options.nodes : 0);
  if (!all) return all.error();
  const std::string door = all->front().node_id;
  auto chosen = chosen_nodes(options, std::move(all.value()));
  if (!chosen) return chosen.error();
  if (chosen->front().node_id != door)
    return make_error(cat("-w/-x: inside an allocation the launch keeps this node (", door,
                          "), which relays it to the others"));
  if (options.nodes > static_cast<int>(chosen->size()))
    return make_error(cat("-N ", options.nodes, " asks for more nodes than the ", chosen->size(),
                          " chosen by -w/-x"));
  if (options.nodes > 0) chosen->resize(static_cast<size_t>(options.nodes));
  return chosen;
}

int launch_main(const std::vector<std::string>& args) {
  MonotonicClock clock;
  const uint64_t began_ns = clock.now_ns();
  auto parsed = parse_launch_options(args);
  if (!parsed) return fail(2, cat(parsed.error().message, " (lattice launch --help)"));
  if (parsed->help) {
    std::fputs(kLaunchUsage, stdout);
    return 0;
  }
  if (auto files = read_launch_files(*parsed); !files) return fail(2, files.error().message);
  // MPIEXEC_TIMEOUT, when -t is not given.
  if (const char* timeout = std::getenv("MPIEXEC_TIMEOUT"); timeout && !parsed->time_limit_ms) {
    auto ms = parse_mpiexec_timeout(timeout);
    if (!ms) return fail(2, ms.error().message);
    parsed->time_limit_ms = *ms;
  }
  if (parsed->warn_signal && !parsed->time_limit_ms)
    return fail(2, "--signal: the launch has no time limit to signal before (-t, MPIEXEC_TIMEOUT)");
  auto file = load_launcher_file(*parsed, std::getenv("LATTICE_LAUNCHER_CONFIG"));
  if (!file) return fail(2, file.error().message);
  settle_fence(*parsed, *file);
  if (auto chosen = choose_agents(*parsed); !chosen) return fail(2, chosen.error().message);
  // Inside an allocation and without --agents: through the local agent's user door, no key.
  std::optional<wire::AllocationInfo> allocation;
  if (parsed->agents.empty()) {
    if (const char* id = std::getenv("LATTICE_ALLOC_ID"); id && parsed->alloc.empty())
      parsed->alloc = id;
    if (!parsed->alloc.empty()) {
      auto info = enter_allocation(*parsed);
      if (!info) return fail(1, info.error().message);
      allocation = std::move(info.value());
    }
  }
  const LaunchOptions& options = *parsed;
  // From here on the launcher holds a cluster key (the operator's, or local mode's) and maybe the
  // fabric manager's token, until it exits: no core dump, and no other process of this user may
  // read its memory or environment (/proc/PID/mem, environ) or ptrace it.
  if (::prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0)
    return fail(1, cat("cannot make the launcher non-dumpable: ", std::strerror(errno)));
  auto fabric = fabric_setup(options, *file);
  if (!fabric) return fail(2, fabric.error().message);
  std::vector<AgentAddress> door_agents;
  if (allocation) {
    auto nodes = allocation_nodes(*allocation, options);
    if (!nodes) return fail(2, nodes.error().message);
    door_agents = std::move(nodes.value());
  }
  // Local mode's agents are this process's children, on its CPUs; others' CPUs it does not know.
  const bool local_mode = !allocation && options.agents.empty();
  auto layout = make_layout(
      options, static_cast<int>(allocation ? door_agents.size() : options.agents.size()),
      local_mode ? static_cast<int>(proc::usable_cpus()) : 0);
  if (!layout) return fail(2, layout.error().message);
  if (options.input_rank >= layout->ntasks)
    return fail(2, cat("--input: rank ", options.input_rank, ", but the launch has ",
                       layout->ntasks, " ranks"));
  auto user = allocation ? Result<JobUserInfo>(allocation_user(*allocation))
                         : resolve_job_user(options.user);
  if (!user) return fail(2, user.error().message);
  auto made = job_request(options, std::move(user.value()));
  if (!made) return fail(2, made.error().message);
  Job::Request request = std::move(made.value());

  // With --agents the key is the operator's; local mode makes its own below.
  std::optional<secure::Credentials> key;
  if (!options.agents.empty()) {
    auto loaded = operators_credentials(options.key_file);
    if (!loaded) return fail(2, loaded.error().message);
    key.emplace(std::move(loaded.value()));
  }

  net::ignore_sigpipe();
  keep_freed_memory_for_reuse();
  // A link per node (in local mode also each agent's process and pipe), and some of our own.
  const size_t files_needed =
      static_cast<size_t>(layout->nodes) * (options.agents.empty() ? 3 : 1) + kOwnOpenFiles;
  if (const size_t files = raise_open_files_limit(); files < files_needed)
    return fail(2, cat("a launch on ", layout->nodes, " nodes needs about ", files_needed,
                       " open files (a link per node), but this process may open ", files,
                       " (the hard limit: ulimit -Hn)"));
  set_log_tag("lattice");
  set_log_level(options.quiet     ? LogLevel::error
                : options.verbose ? LogLevel::info
                                  : LogLevel::warn);
  if (const char* level = std::getenv("LATTICE_LOG_LEVEL"))  // e.g. debug, for operators
    if (auto parsed_level = parse_log_level(level)) set_log_level(*parsed_level);
  if (!fabric->note.empty()) LAT_LOG(debug, "fabric", fabric->note);
  net::Loop loop;
  std::unique_ptr<LocalAgents> local;
  std::unique_ptr<Job> job;
  int early_exit = -1;  // set when the launch never started

  auto finish = [&] {
    if (local)
      local->stop([&] { loop.stop(); });
    else
      loop.stop();
  };
  // The CXI service is given back before the launcher stops, however the launch ended.
  std::unique_ptr<CxiLease> lease;
  if (fabric->token)
    lease = std::make_unique<CxiLease>(loop, clock, fabric->settings, std::move(*fabric->token));
  auto end = [&] {
    if (lease)
      lease->release(finish);
    else
      finish();
  };
  auto run_job = [&](std::vector<AgentAddress> agents) {
    AgentReach reach{key ? &*key : nullptr, key ? std::string() : user_door_path()};
    job = std::make_unique<Job>(loop, clock, options, std::move(reach), *layout, std::move(agents),
                                std::move(request), end, lease.get());
    job->start(static_cast<double>(clock.now_ns() - began_ns) / 1e6);
  };

  std::vector<std::unique_ptr<net::SignalWatcher>> signals;
  for (int signum : {SIGINT, SIGTERM, SIGHUP})
    signals.push_back(std::make_unique<net::SignalWatcher>(loop, signum, [&](int s) {
      if (job) return job->signal(s == SIGHUP ? SIGTERM : s);
      early_exit = 128 + s;  // still starting agents
      end();
    }));

  if (allocation) {
    run_job(std::move(door_agents));
  } else if (options.agents.empty()) {
    LocalAgentPaths paths{find_sibling("lattice-agentd", LATTICE_SBINDIR),
                          // The launcher reports failures itself; with -v agents add warnings.
                          options.verbose ? "warn" : "error"};
    local = std::make_unique<LocalAgents>(loop, paths);
    start_local(*local, layout->nodes, key, run_job, [&] {
      early_exit = 1;
      end();
    });
  } else {
    run_job(given_agents(options.agents, options.agents.size()));
  }
  loop.run();
  signals.clear();
  if (early_exit >= 0 || !job) return early_exit >= 0 ? early_exit : 1;
  std::fputs(job->final_report().c_str(), stderr);
  return job->exit_code();
}

// `lattice alloc`: an allocation on running agents (with their key) or local ones, its batch
// step, and its end (allocation_run.hpp).
int alloc_main(const std::vector<std::string>& args) {
  MonotonicClock clock;
  auto parsed = parse_alloc_options(args);
  if (!parsed) return fail(2, cat(parsed.error().message, " (lattice alloc --help)"));
  if (parsed->help) {
    std::fputs(kAllocUsage, stdout);
    return 0;
  }
  const AllocOptions& o = *parsed;
  if (::prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0)
    return fail(1, cat("cannot make the launcher non-dumpable: ", std::strerror(errno)));
  LaunchOptions fabric_options;
  fabric_options.vni = o.vni;
  fabric_options.fabric_url = o.fabric_url;
  fabric_options.fabric_token_file = o.fabric_token_file;
  fabric_options.config_file = o.config_file;
  auto file = load_launcher_file(fabric_options, std::getenv("LATTICE_LAUNCHER_CONFIG"));
  if (!file) return fail(2, file.error().message);
  auto fabric = fabric_setup(fabric_options, *file);
  if (!fabric) return fail(2, fabric.error().message);
  auto user = resolve_job_user(o.user);
  if (!user) return fail(2, user.error().message);

  AllocationRun::Plan plan;
  plan.spec.id = o.id.empty() ? new_launch_id() : o.id;
  plan.spec.user = wire::JobUser{user->uid, user->gid, user->groups, user->name};
  plan.spec.time_limit_ms = o.time_limit_ms;
  plan.spec.cpus = o.cpus;
  plan.spec.memory_bytes = o.memory_bytes;
  plan.spec.slurm_compat = o.slurm_compat;
  plan.verbose = o.verbose;
  // The batch step: COMMAND, one process on the first node, no PMI, the launcher's stdin.
  LaunchOptions& batch = plan.batch;
  batch.apps = {App{1, {}, o.command.front(), {o.command.begin() + 1, o.command.end()}}};
  batch.nodes = 1;
  batch.pmi = wire::PmiMode::none;
  batch.alloc = plan.spec.id;
  batch.slurm_compat = o.slurm_compat;
  batch.verbose = o.verbose;
  batch.launch = "star";
  auto request = job_request(batch, std::move(user.value()));
  if (!request) return fail(2, request.error().message);
  plan.batch_request = std::move(request.value());

  std::optional<secure::Credentials> key;
  if (!o.agents.empty()) {
    auto loaded = operators_credentials(o.key_file);
    if (!loaded) return fail(2, loaded.error().message);
    key.emplace(std::move(loaded.value()));
  }
  net::ignore_sigpipe();
  set_log_tag("lattice");
  set_log_level(o.verbose ? LogLevel::info : LogLevel::warn);
  net::Loop loop;
  std::unique_ptr<LocalAgents> local;
  std::unique_ptr<CxiLease> lease;
  if (fabric->token)
    lease = std::make_unique<CxiLease>(loop, clock, fabric->settings, std::move(*fabric->token));
  std::unique_ptr<AllocationRun> run;
  int early_exit = -1;
  auto finish = [&] {
    if (local)
      local->stop([&] { loop.stop(); });
    else
      loop.stop();
  };
  auto start = [&](std::vector<AgentAddress> agents) {
    run = std::make_unique<AllocationRun>(loop, clock, *key, std::move(agents), std::move(plan),
                                          lease.get(), finish);
    run->start();
  };
  std::vector<std::unique_ptr<net::SignalWatcher>> signals;
  for (int signum : {SIGINT, SIGTERM, SIGHUP})
    signals.push_back(std::make_unique<net::SignalWatcher>(loop, signum, [&](int s) {
      if (run) return run->signal(s == SIGHUP ? SIGTERM : s);
      early_exit = 128 + s;
      finish();
    }));
  if (o.agents.empty()) {
    local = std::make_unique<LocalAgents>(
        loop, LocalAgentPaths{find_sibling("lattice-agentd", LATTICE_SBINDIR),
                              o.verbose ? "warn" : "error"});
    start_local(*local, o.nodes > 0 ? o.nodes : 1, key, start, [&] {
      early_exit = 1;
      finish();
    });
  } else {
    start(given_agents(o.agents, o.nodes > 0 ? static_cast<size_t>(o.nodes) : o.agents.size()));
  }
  loop.run();
  signals.clear();
  if (early_exit >= 0 || !run) return early_exit >= 0 ? early_exit : 1;
  std::fputs(run->final_report().c_str(), stderr);
  return run->exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return fail(2, cat("no command\n", kUsage));
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "launch") return launch_main(args);
  if (command == "admin") return admin_main(args);
  if (command == "alloc") return alloc_main(args);
  if (command == "--version") {
    std::printf("lattice %s (%s)\n", LATTICE_VERSION,
                rpc::describe_versions(secure::kHandshakeVersion).c_str());
    return 0;
  }
  if (command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto nearest = closest(command, {"launch", "alloc", "admin", "--version", "--help"});
  return fail(2, cat("unknown command '", command, "'",
                     nearest ? cat("; did you mean '", *nearest, "'?") : "", " (lattice --help)"));
}
