// lattice-mpi-launcher's two halves: reading the command line an MPI launcher gives its "ssh"
// (Hydra: `PROG -x HOST CMD...`, Open MPI: `PROG HOST CMD...`), and asking the local agent, over
// the launch's exec socket with the launch's token, to run CMD on HOST's agent, relaying its
// output and exit status as ssh would.
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

struct RemoteCommand {
  std::string node;
  std::vector<std::string> command;  // joined with spaces and run by /bin/sh -c on the node
};

// ssh's status when it could not run the command.
inline constexpr int kNotRun = 255;
// Says `why` on stderr, as lattice-mpi-launcher; returns kNotRun.
int not_run(const std::string& why);

// Skips ssh's options (flags, and -o/-p/-l/-i/-F with their values), then HOST and the command.
Result<RemoteCommand> parse_ssh_command(const std::vector<std::string>& args);

// Runs `remote` through the agent behind `socket_path`; returns the exit status to exit with
// (the command's, 128 + signal when killed, 255 when refused or cut off, said on stderr).
int run_remote(const RemoteCommand& remote, const std::string& socket_path,
               const std::string& token);

}  // namespace lattice::launcher
