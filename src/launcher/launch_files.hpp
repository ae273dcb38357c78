// What `lattice launch`'s command line names but does not hold: -f's node file and the program
// files (--multi-prog, -configfile), read here (bounded), and the choice of -w/-x applied to the
// nodes the launch may use.
#pragma once

#include <vector>

#include "base/result.hpp"
#include "launcher/local_agents.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

// Reads -f into options.nodelist and a program file into options.apps.
Status read_launch_files(LaunchOptions& options);

// -w/-x over `nodes` (--agents', or an allocation's): those chosen, in their order. Without
// -w/-x, `nodes` as they are.
Result<std::vector<AgentAddress>> chosen_nodes(const LaunchOptions& options,
                                               std::vector<AgentAddress> nodes);

}  // namespace lattice::launcher
