#include "launcher/alloc_options.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

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
  size_t i = 0;
  for (; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;
    std::optional<std::string> inline_value;
    if (auto eq = arg.find('='); starts_with(arg, "--") && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if ((arg.size() > 2 && arg[1] != '-') && (arg[1] == 'N' || arg[1] == 't')) {
      inline_value = arg.substr(2);  // -N2, -t10
      arg = arg.substr(0, 2);
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= argv.size()) return make_error(cat(arg, " needs a value"));
      return argv[++i];
    };
    if (arg == "-v" || arg == "--verbose" || arg == "--slurm-compat") {
      if (inline_value) return make_error(cat(arg, " takes no value"));
      (arg == "--slurm-compat" ? o.slurm_compat : o.verbose) = true;
      continue;
    }
    // Named before its value is taken: `--bogus` last is unknown, not missing a value.
    static const char* const kTakesValue[] = {"--agents",
                                              "-N",
                                              "--nodes",
                                              "--cpus-per-node",
                                              "--vni",
                                              "-t",
                                              "--time",
                                              "--mem",
                                              "--id",
                                              "--user",
                                              "--key-file",
                                              "--fabric-url",
                                              "--fabric-token-file",
                                              "--config"};
    if (std::find(std::begin(kTakesValue), std::end(kTakesValue), arg) == std::end(kTakesValue))
      return make_error(cat("unknown option '", arg, "'"));
    auto v = value();
    if (!v) return v.error();
    if (arg == "--agents") {
      auto agents = parse_agents(*v);
      if (!agents) return agents.error();
      o.agents = std::move(agents.value());
    } else if (arg == "-N" || arg == "--nodes" || arg == "--cpus-per-node" || arg == "--vni") {
      auto n = parse_int(*v);
      if (!n || *n <= 0 || *n > 65536)
        return make_error(cat(arg, ": expected a number from 1 to 65536, got '", *v, "'"));
      if (arg == "--cpus-per-node")
        o.cpus = static_cast<uint32_t>(*n);
      else if (arg == "--vni")
        o.vni = static_cast<uint32_t>(*n);
      else
        o.nodes = static_cast<int>(*n);
    } else if (arg == "-t" || arg == "--time") {
      auto ms = parse_time_limit(*v);
      if (!ms) return ms.error();
      o.time_limit_ms = *ms;
    } else if (arg == "--mem") {
      auto bytes = parse_memory(*v);
      if (!bytes) return bytes.error();
      o.memory_bytes = *bytes;
    } else if (arg == "--id") {
      if (!wire::valid_allocation_id(*v))
        return make_error(cat("--id: letters, digits and '-_.' (at most 128), got '", *v, "'"));
      o.id = *v;
    } else if (arg == "--user" || arg == "--key-file" || arg == "--fabric-url" ||
               arg == "--fabric-token-file" || arg == "--config") {
      if (v->empty()) return make_error(cat(arg, " needs a value"));
      (arg == "--user"         ? o.user
       : arg == "--key-file"   ? o.key_file
       : arg == "--fabric-url" ? o.fabric_url
       : arg == "--config"     ? o.config_file
                               : o.fabric_token_file) = *v;
    } else {
      return make_error(cat("unknown option '", arg, "'"));
    }
  }
  o.command.assign(argv.begin() + static_cast<long>(i), argv.end());
  if (o.command.empty() || o.command[0].empty()) return make_error("no command for the batch step");
  if (!o.agents.empty() && o.nodes > static_cast<int>(o.agents.size()))
    return make_error(
        cat("-N ", o.nodes, " asks for more nodes than the ", o.agents.size(), " agents given"));
  return o;
}

}  // namespace lattice::launcher
