// srun's -w/--nodelist and -x/--exclude (mpiexec's -hosts and -f): which of the nodes a launch
// may use (the agents of --agents NAME=HOST:PORT, or an allocation's) it does use. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

// The indices into `ids` (the nodes' ids, in their order) of the nodes `nodelist` names (all,
// when it is empty) less those `exclude` names, in their order in `ids`. Both lists are Slurm
// host lists; a name that is no node's id is an error naming it, as is a list that leaves none.
Result<std::vector<size_t>> choose_nodes(const std::vector<std::string>& ids,
                                         const std::string& nodelist, const std::string& exclude);

// mpiexec's -f file (or a spawn's hostfile): a node id a line (Hydra's "host:SLOTS" and Open
// MPI's "host slots=N" give the host; '#' starts a comment) -> a host list for choose_nodes.
// Errors start with `what`.
Result<std::string> hostfile_nodelist(std::string_view text, std::string_view what = "-f");

}  // namespace lattice::launcher
