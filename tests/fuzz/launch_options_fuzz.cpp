// libFuzzer target: `lattice launch`'s command line as the launcher reads it: its options
// (parse_launch_options: counts, -t time limits, --agents, --cpu-bind, -c, GPUs, --export, output
// patterns, MPMD segments, --mem, srun's and mpiexec's spellings, -w/-x, ...), MPIEXEC_TIMEOUT,
// the rank layout (make_layout) and what
// --export takes (export_environment). Any argv is refused with an error or gives options
// within their documented bounds whose layout places every rank on a node and gives every node
// a rank; and when agents are named, the request the launcher writes for them (host lists,
// layout rules, apps, environment) is one each agent decodes back to that very layout, unless
// the command line holds something the agents must refuse (a name or variable they cannot take).
// Input: argv, NUL-separated; its last argument is also tried as MPIEXEC_TIMEOUT's value.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/strings.hpp"
#include "config/config.hpp"
#include "launcher/export_env.hpp"
#include "launcher/launch_request.hpp"
#include "launcher/layout.hpp"
#include "launcher/node_choice.hpp"
#include "launcher/options.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/environment.hpp"

namespace {

using namespace lattice;
using namespace lattice::launcher;

constexpr uint64_t kYearMs = 366ull * 86400 * 1000;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "launch_options: %s\n", what);
  std::abort();
}

const std::vector<std::string> kEnviron = {"HOME=/home/u",
                                           "OMP_NUM_THREADS=4",
                                           "PATH=/usr/bin",
                                           "PMI_RANK=3",
                                           "LATTICE_KEY_FILE=/k",
                                           "BASH_FUNC_f%%=() { :; }",
                                           "LD_LIBRARY_PATH=/opt/lib",
                                           "A=",
                                           "=odd",
                                           "NOEQUALS"};

// A -t value over a year is refused, however its digits wrap.
void check_time_limit(const std::string& text) {
  auto ms = parse_time_limit(text);
  if (!ms) return;
  require(*ms > 0 && *ms <= kYearMs, "a time limit within a year");
  auto dash = text.find('-');
  auto days = dash == std::string::npos ? std::nullopt : parse_int(text.substr(0, dash));
  require(!days || *days <= 366, "more than 366 days accepted as a time limit");
}

void check_layout(const LaunchOptions& o, const Layout& layout) {
  require(layout.ntasks >= 1 && layout.nodes >= 1 && layout.nodes <= layout.ntasks,
          "ranks and nodes");
  require(o.agents.empty() || layout.nodes <= static_cast<int>(o.agents.size()),
          "no more nodes than agents");
  require(layout.rank_nodes.size() == static_cast<size_t>(layout.ntasks), "a node per rank");
  std::vector<int> per_node(static_cast<size_t>(layout.nodes));
  for (int node : layout.rank_nodes) {
    require(node >= 0 && node < layout.nodes, "rank nodes in range");
    ++per_node[static_cast<size_t>(node)];
  }
  for (int n : per_node) require(n > 0, "every node a rank");
  if (o.apps.size() > 1) require(layout.ntasks == o.ntasks(), "MPMD: the segments' ranks");
}

// What an agent may refuse for the command line's own sake, not the launcher's encoding.
bool agents_must_refuse(const LaunchOptions& o, const Exported& exported, const Layout& layout,
                        const std::vector<wire::PeerInfo>& peers) {
  std::set<std::string> ids;
  for (const auto& peer : peers)
    if (!config::node_id_problem(peer.node_id).empty() || !ids.insert(peer.node_id).second)
      return true;
  const proc::EnvRules user_job{false, {}};
  for (const auto& app : o.apps)
    if (!proc::check_request_env(app.env, user_job)) return true;
  if (!proc::check_request_env(exported.assigned, user_job)) return true;
  // --mem-per-cpu times a node's ranks past 2^62 bytes: no limit an agent can count.
  if (o.memory_per_cpu) {
    std::vector<uint64_t> ranks(static_cast<size_t>(layout.nodes));
    for (int node : layout.rank_nodes) ++ranks[static_cast<size_t>(node)];
    for (uint64_t n : ranks)
      if (o.memory_per_cpu > (uint64_t{1} << 62) / n) return true;
  }
  return o.input_rank >= layout.ntasks;  // the launcher refuses it before it sends anything
}

void check_request(const LaunchOptions& o, const Exported& exported, const Layout& layout) {
  std::vector<wire::PeerInfo> peers;
  for (int i = 0; i < layout.nodes; ++i) {
    const auto& agent = o.agents[static_cast<size_t>(i)];
    peers.push_back({agent.name.empty() ? agent.address.host : agent.name, agent.address.host,
                     static_cast<uint16_t>(agent.address.port)});
  }
  const bool may_refuse = agents_must_refuse(o, exported, layout, peers);
  launcher::JobRequest request{
      "fuzz-1", {1000, 1000, {1000}, "u"}, exported.harvested, exported.assigned};
  auto plain = launcher::launch_request(o, request, layout, peers, "/tmp");
  for (int node : {0, layout.nodes - 1}) {
    plain.node_index = static_cast<uint32_t>(node);
    auto msg = wire::launch_request(plain);
    agent::LaunchDefaults defaults;
    defaults.node_id = peers[static_cast<size_t>(node)].node_id;
    defaults.agent_uid = 1000;
    defaults.max_ranks_per_node = 1u << 20;
    auto decoded =
        wire::decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
    require(decoded.ok(), "an agent cannot decode what the launcher wrote");
    auto spec = agent::make_launch_spec(*decoded, defaults);
    if (!spec) {
      if (!may_refuse) std::fprintf(stderr, "refused: %s\n", spec.error().message.c_str());
      require(may_refuse, "an agent refuses what the launcher wrote");
      continue;
    }
    require(spec->world_size == layout.ntasks && spec->rank_nodes == layout.rank_nodes &&
                spec->nnodes() == layout.nodes && spec->node_index == node,
            "an agent reads another layout than the launcher wrote");
    for (int i = 0; i < layout.nodes; ++i)
      require(spec->peers[static_cast<size_t>(i)].node_id == peers[static_cast<size_t>(i)].node_id,
              "an agent reads other nodes than the launcher wrote");
    require(spec->apps.size() == o.apps.size(), "apps");
    require(
        spec->memory_bytes == (o.memory_per_cpu ? o.memory_per_cpu * spec->local_ranks().size() *
                                                      std::max<uint64_t>(1, o.cpus_per_task)
                                                : o.memory_bytes),
        "a node's memory limit is not --mem, nor --mem-per-cpu times its ranks' CPUs");
    require(spec->exclusive == o.exclusive, "--exclusive");
    require(spec->cpus_per_task == o.cpus_per_task && spec->gpus.per_task == o.gpus.per_task &&
                spec->gpus.per_node == o.gpus.per_node && spec->gpus.map == o.gpus.map,
            "CPUs and GPUs per rank");
    for (size_t a = 0; a < o.apps.size(); ++a)
      require(spec->apps[a].entrypoint == o.apps[a].program && spec->apps[a].args == o.apps[a].args,
              "an app's program and arguments");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv =
      split(std::string_view(reinterpret_cast<const char*>(data), size), '\0');
  if (!argv.empty()) {
    check_time_limit(argv.back());
    if (auto ms = parse_mpiexec_timeout(argv.back()); ms)
      require(*ms >= 1000 && *ms <= kYearMs, "MPIEXEC_TIMEOUT within a year");
  }
  auto options = parse_launch_options(argv);
  if (!options) return 0;
  const LaunchOptions& o = *options;
  // --help asks for nothing else; -configfile's programs come from its file (program_files).
  if (o.help) return 0;
  if (!o.configfile.empty()) {
    require(o.apps.size() == 1 && o.apps.front().program.empty(), "-configfile and a program");
    return 0;
  }
  require(!o.apps.empty() && !o.apps.front().program.empty() && !o.apps.back().program.empty(),
          "programs");
  require(o.time_limit_ms <= kYearMs, "-t within a year");
  require(o.memory_bytes <= uint64_t{1} << 62 && o.memory_per_cpu <= uint64_t{1} << 62 &&
              !(o.memory_bytes && o.memory_per_cpu),
          "--mem and --mem-per-cpu: at most 2^62 bytes, and not both");
  for (int cpu : o.cpu_bind.map) require(cpu >= 0 && cpu < proc::kMaxCpus, "--cpu-bind's CPUs");
  for (const auto& mask : o.cpu_bind.masks) {
    require(!mask.empty(), "a mask_cpu mask names CPUs");
    for (int cpu : mask) require(cpu >= 0 && cpu < proc::kMaxCpus, "--cpu-bind's masks");
  }
  require(o.cpus_per_task >= 0 && o.cpus_per_task <= proc::kMaxCpus, "-c within bounds");
  require(o.gpus.per_task >= 0 && o.gpus.per_task <= proc::kMaxGpus && o.gpus.per_node >= 0 &&
              o.gpus.per_node <= proc::kMaxGpus,
          "GPU counts within bounds");
  require(static_cast<bool>(proc::check_gpu_request(o.gpus)), "a GPU request agents refuse");
  for (const auto& agent : o.agents) require(agent.address.port > 0, "agents' ports");

  if (!o.nodelist.empty() || !o.exclude.empty()) {  // -w/-x over the agents' node ids
    std::vector<std::string> ids;
    for (const auto& agent : o.agents) ids.push_back(agent.name);
    if (auto chosen = choose_nodes(ids, o.nodelist, o.exclude)) {
      require(!chosen->empty() && chosen->size() <= ids.size(), "-w/-x choose some nodes");
      for (size_t i = 0; i < chosen->size(); ++i)
        require((*chosen)[i] < ids.size() && (i == 0 || (*chosen)[i - 1] < (*chosen)[i]),
                "-w/-x keep the agents' order");
    }
  }

  auto exported = export_environment(o.exports, kEnviron);
  if (exported) {
    for (const auto* list : {&exported->harvested, &exported->assigned})
      for (const auto& [name, value] : *list)
        require(!proc::reserved_env_name(name), "--export passes a reserved name");
    for (const auto& [name, value] : exported->harvested)
      require(static_cast<bool>(proc::check_request_env({{name, value}}, {false, {}})),
              "--export takes a name agents refuse");
  }

  // Local mode on a node of 2 CPUs: -c's ranks fit their nodes.
  if (auto local = make_layout(o, 0, 2); local && o.cpus_per_task > 0 && o.agents.empty()) {
    check_layout(o, *local);
    std::vector<int> per_node(static_cast<size_t>(local->nodes));
    for (int node : local->rank_nodes) ++per_node[static_cast<size_t>(node)];
    for (int n : per_node) require(n * o.cpus_per_task <= 2, "-c's ranks beyond a node's CPUs");
  }
  auto layout = make_layout(o, static_cast<int>(o.agents.size()));
  if (!layout) return 0;
  check_layout(o, *layout);
  if (exported && !o.agents.empty()) check_request(o, *exported, *layout);
  return 0;
}
