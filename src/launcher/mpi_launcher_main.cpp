// lattice-mpi-launcher: the "ssh" of MPI launchers started inside a Lattice launch or allocation
// (Hydra's launcher exec, Open MPI's plm_rsh_agent): `lattice-mpi-launcher [ssh options] NODE
// CMD...` runs CMD on NODE's agent as the same user: inside an allocation as a launch of its own
// through the user door (door_exec.hpp), else within the same launch (exec_client.hpp).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher/door_exec.hpp"
#include "launcher/exec_client.hpp"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a vanished agent is an error to report, not a silent death
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::puts(
        "usage: lattice-mpi-launcher [ssh options] NODE COMMAND...\n"
        "Runs COMMAND on NODE within the current Lattice allocation (LATTICE_ALLOC_ID, through\n"
        "the agent's user door) or launch (LATTICE_EXEC_SOCKET and LATTICE_EXEC_TOKEN); the\n"
        "agent sets it as HYDRA_LAUNCHER_EXEC and OMPI_MCA_plm_rsh_agent.");
    return 0;
  }
  auto remote = lattice::launcher::parse_ssh_command(args);
  if (!remote) return lattice::launcher::not_run(remote.error().message);
  if (const char* allocation = std::getenv("LATTICE_ALLOC_ID"); allocation && *allocation)
    return lattice::launcher::run_in_allocation(*remote, allocation);
  const char* socket_path = std::getenv("LATTICE_EXEC_SOCKET");
  const char* token = std::getenv("LATTICE_EXEC_TOKEN");
  if (!socket_path || !*socket_path || !token || !*token)
    return lattice::launcher::not_run(
        "not inside a Lattice launch or allocation (LATTICE_EXEC_SOCKET, LATTICE_EXEC_TOKEN and "
        "LATTICE_ALLOC_ID are unset)");
  return lattice::launcher::run_remote(*remote, socket_path, token);
}
