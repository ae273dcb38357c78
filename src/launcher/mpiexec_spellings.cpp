#include "launcher/mpiexec_spellings.hpp"

#include "base/strings.hpp"

namespace lattice::launcher {

const std::vector<SingleDash> kMpiexecSpellings = {
    {"-np", "--np"},
    {"-ppn", "--ppn"},
    {"-hosts", "--hosts"},
    {"-host", "--hosts"},
    {"-hostfile", "--hostfile"},
    {"-machinefile", "--hostfile"},
    {"-npernode", "--npernode"},
    {"-genvlist", "--envlist"},
    {"-pmi-port", "--pmi-port"},
    {"-genv", "--genv", true},
    {"-genvall", "--genvall"},
    {"-genvnone", "--genvnone"},
    {"-envlist", "--envlist"},
    {"-env", "--env", true},
    {"-bind-to", "--bind-to"},
    {"-map-by", "--map-by"},
    {"-prepend-rank", "--prepend-rank"},
    {"-outfile-pattern", "--outfile-pattern"},
    {"-errfile-pattern", "--errfile-pattern"},
    {"-wdir", "--wdir"},
    {"-configfile", "--configfile"},
};

const std::vector<SingleDash> kSegmentSpellings = {{"-np", "--np"}, {"-env", "--env", true}};

Result<proc::CpuBind> parse_bind_to(const std::string& value) {
  const char* ours = value == "core"       ? "cores"
                     : value == "socket"   ? "sockets"
                     : value == "hwthread" ? "threads"
                     : value == "none"     ? "none"
                                           : nullptr;
  if (!ours) return make_error(cat("--bind-to: core, socket, hwthread or none, got '", value, "'"));
  auto bind = proc::parse_cpu_bind(ours);
  if (!bind) return make_error(cat("--bind-to ", value, ": ", bind.error().message));
  return bind;
}

Result<Distribution> parse_map_by(const std::string& value) {
  if (value == "node") return Distribution::cyclic;
  if (value == "slot" || value == "core" || value == "socket" || value == "hwthread")
    return Distribution::block;
  return make_error(cat("--map-by: slot, node, core, socket or hwthread, got '", value, "'"));
}

std::string hydra_pattern(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    out += pattern[i];
    if (pattern[i] != '%' || i + 1 == pattern.size()) continue;
    char next = pattern[++i];
    out += next == 'r' ? 't' : next == 'h' ? 'n' : next;
  }
  return out;
}

}  // namespace lattice::launcher
