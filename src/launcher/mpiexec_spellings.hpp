// mpiexec's (MPICH Hydra's) spellings of `lattice launch`'s options: its single-dash long names
// and the values of -bind-to, -map-by and -outfile-pattern, translated to ours. Pure.
#pragma once

#include <string>
#include <vector>

#include "base/command_line.hpp"
#include "launcher/options.hpp"
#include "proc/cpu_binding.hpp"

namespace lattice::launcher {

// -np, -ppn, -hosts/-host, -hostfile/-machinefile, -npernode, -genv K V, -genvall, -genvnone,
// -genvlist, -envlist, -env K V, -bind-to, -map-by, -prepend-rank, -outfile-pattern,
// -errfile-pattern, -wdir, -configfile, -pmi-port: each an option with two dashes
// (launch_cli.cpp declares them beside ours).
extern const std::vector<SingleDash> kMpiexecSpellings;
// What a segment (after ':', or a -configfile line) takes of them: -np, -env K V.
extern const std::vector<SingleDash> kSegmentSpellings;

// -bind-to core|socket|hwthread|none -> --cpu-bind cores|sockets|threads|none.
Result<proc::CpuBind> parse_bind_to(const std::string& value);
// -map-by node -> cyclic; slot, core, socket, hwthread -> block (ranks fill a node first).
Result<Distribution> parse_map_by(const std::string& value);
// -outfile-pattern's %r (rank) and %h (host) -> our %t and %n; the rest is checked as ours.
std::string hydra_pattern(const std::string& pattern);

}  // namespace lattice::launcher
