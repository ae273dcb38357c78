// lattice-mpi-launcher inside an allocation (its batch step, and what that starts): the
// command an MPI launcher gives its "ssh" runs as a launch of its own, one process without PMI
// on the named node, asked of this node's agent on the user door. It is then contained in the
// allocation like any launch of it, its output and exit status come back as ssh would give them,
// and it ends with the allocation.
#pragma once

#include <string>

#include "launcher/exec_client.hpp"

namespace lattice::launcher {

// The exit status to exit with: the command's (128 + signal when killed), 255 when it could not
// be started (said on stderr).
int run_in_allocation(const RemoteCommand& remote, const std::string& allocation_id);

}  // namespace lattice::launcher
