// The escape hatch's host files and variables, from a launch's layout.
#include "agent/escape_hatch.hpp"

#include <doctest/doctest.h>

#include <map>

namespace lattice::agent {

namespace {

LaunchSpec uneven() {
  LaunchSpec spec;
  spec.peers = PeerTable({Peer{"n1", "h", 1}, Peer{"n2", "h", 2}});
  spec.rank_nodes = {0, 1, 0, 1, 1};
  spec.world_size = 5;
  return spec;
}

}  // namespace

TEST_CASE("host files give each node the launch's rank count there") {
  CHECK(hydra_hosts(uneven()) == "n1:2\nn2:3\n");
  CHECK(openmpi_hostfile(uneven()) == "n1 slots=2\nn2 slots=3\n");
}

TEST_CASE("ranks and hatch commands learn the tool, the files, the socket and the token") {
  EscapeHatch hatch{"/usr/libexec/lattice-mpi-launcher", "/run/l/lattice-L",
                    "/run/l/lattice-L/exec.sock", "abcd"};
  std::map<std::string, std::string> ranks, commands;
  for (auto& [k, v] : escape_environment(hatch)) ranks[k] = v;
  for (auto& [k, v] : command_environment(hatch)) commands[k] = v;
  CHECK(ranks["HYDRA_LAUNCHER"] == "ssh");
  CHECK(ranks["HYDRA_LAUNCHER_EXEC"] == hatch.mpi_launcher);
  CHECK(ranks["HYDRA_HOST_FILE"] == "/run/l/lattice-L/hosts.hydra");
  CHECK(ranks["OMPI_MCA_plm_rsh_agent"] == hatch.mpi_launcher);
  CHECK(ranks["OMPI_MCA_orte_default_hostfile"] == "/run/l/lattice-L/hosts.openmpi");
  CHECK(ranks["LATTICE_EXEC_SOCKET"] == hatch.exec_socket);
  CHECK(ranks["LATTICE_EXEC_TOKEN"] == "abcd");
  // mpirun forwards its own OMPI_MCA_* to every node: per-node directories only for commands.
  CHECK(ranks.count("OMPI_MCA_btl_vader_backing_directory") == 0);
  CHECK(commands["OMPI_MCA_btl_vader_backing_directory"] == hatch.launch_dir);
  CHECK(commands["OMPI_MCA_orte_tmpdir_base"] == hatch.launch_dir);
  CHECK(commands["HYDRA_LAUNCHER_EXEC"] == hatch.mpi_launcher);
}

}  // namespace lattice::agent
