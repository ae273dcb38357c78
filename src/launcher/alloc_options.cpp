#include "launcher/alloc_options.hpp"

#include <cctype>

#include "base/command_line.hpp"
#include "base/strings.hpp"
#include "wire/allocation.hpp"

namespace lattice::launcher {

const char* const kAllocUsage =
    "usage: lattice alloc [options] [--] COMMAND [ARGS...]\n"
    "Starts an allocation on a set of agents, runs COMMAND in it as its user on its first node\n"
    "(the batch step), and ends it when COMMAND exits or at its time limit.\n"
    "  --agents [NAME=]HOST:PORT,...  running agents (with --key-file); without: local agents\n"
    "  -N, --nodes N          local mode: agents to start; with --agents: the first N of them\n"
    "  --user NAME|UID        whose allocation it is (default: the invoking user)\n"
    "  -t, --time LIMIT       its time limit (srun's formats: MM, MM:SS, HH:MM:SS, D-HH, ...)\n"
    "  --cpus-per-node N      CPUs it holds on each node (default: all the agent may use)\n"
    "  --mem SIZE             memory for all its processes on each node (K, M, G, T; M default)\n"
    "  --id ID                its id (default: a new UUID)\n"
    "  --key-file FILE        the agents' cluster key (or LATTICE_KEY_FILE)\n"
    "  --slurm-compat         SLURM_* variables for its processes; srun is lattice-srun\n"
    "  --vni N --fabric-url URL --fabric-token-file FILE --config FILE\n"
    "                         its CXI service, from the fabric manager, for its whole life\n"
    "  -v, --verbose\n"
    "Exit status: the batch step's; 124 when the time limit ended it; 1 when it could not start.\n";

Result<uint64_t> parse_memory(const std::string& text, std::string_view flag) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  auto number = parse_int(text.substr(0, digits));
  std::string unit = text.substr(digits);
  uint64_t scale = uint64_t{1} << 20;
  if (unit == "K" || unit == "k")
    scale = uint64_t{1} << 10;
  else if (unit == "G" || unit == "g")
    scale = uint64_t{1} << 30;
  else if (unit == "T" || unit == "t")
    scale = uint64_t{1} << 40;
  else if (!unit.empty() && unit != "M" && unit != "m")
    number.reset();
  if (!number || *number <= 0 || static_cast<uint64_t>(*number) > (uint64_t{1} << 62) / scale)
    return make_error(cat(flag, ": expected a size such as 512M or 4G, got '", text, "'"));
  return static_cast<uint64_t>(*number) * scale;
}

Result<AllocOptions> parse_alloc_options(const std::vector<std::string>& argv) {
  AllocOptions o;
  CLI::App cli;
  Options w(cli);
  w.value("--agents", [&o](const std::string&, const std::string& v) -> Status {
    auto agents = parse_agents(v);
    if (!agents) return agents.error();
    o.agents = std::move(agents.value());
    return {};
  });
  w.count("-N,--nodes", 65536, [&o](int n) { o.nodes = n; });
  w.count("--cpus-per-node", 65536, [&o](int n) { o.cpus = static_cast<uint32_t>(n); });
  w.count("--vni", 65536, [&o](int n) { o.vni = static_cast<uint32_t>(n); });
  w.value("-t,--time", [&o](const std::string&, const std::string& v) -> Status {
    auto ms = parse_time_limit(v);
    if (!ms) return ms.error();
    o.time_limit_ms = *ms;
    return {};
  });
  w.value("--mem", [&o](const std::string&, const std::string& v) -> Status {
    auto bytes = parse_memory(v);
    if (!bytes) return bytes.error();
    o.memory_bytes = *bytes;
    return {};
  });
  w.value("--id", [&o](const std::string& flag, const std::string& v) -> Status {
    if (!wire::valid_allocation_id(v))
      return make_error(cat(flag, ": letters, digits and '-_.' (at most 128), got '", v, "'"));
    o.id = v;
    return {};
  });
  w.text("--user", o.user);
  w.text("--key-file", o.key_file);
  w.text("--fabric-url", o.fabric_url);
  w.text("--fabric-token-file", o.fabric_token_file);
  w.text("--config", o.config_file);
  w.flag("-v,--verbose", [&o] { o.verbose = true; });
  w.flag("--slurm-compat", [&o] { o.slurm_compat = true; });
  auto line = w.parse(argv);
  if (!line) return line.error();
  if (line->help) {
    o.help = true;
    return o;
  }
  // A command starting with '-' only after "--" ("-" alone is a mistyped option).
  if (!line->dashdash && !line->rest.empty() && starts_with(line->rest.front(), "-"))
    return make_error(cat("unknown option '", line->rest.front(), "'"));
  o.command = std::move(line->rest);
  if (o.command.empty() || o.command[0].empty()) return make_error("no command for the batch step");
  if (!o.agents.empty() && o.nodes > static_cast<int>(o.agents.size()))
    return make_error(
        cat("-N ", o.nodes, " asks for more nodes than the ", o.agents.size(), " agents given"));
  return o;
}

}  // namespace lattice::launcher
