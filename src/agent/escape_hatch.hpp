// What makes a plain mpiexec.hydra or Open MPI mpirun, started inside a launch, place its
// processes on the launch's nodes through lattice-mpi-launcher instead of ssh (docs/pmi-wire.md
// §8): Hydra's launcher, launcher exec and host file, Open MPI's rsh agent and default hostfile,
// and the exec socket and token the launcher tool needs. Pure: the files' contents and the
// variables, from the launch's layout.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agent/launch_spec.hpp"

namespace lattice::agent {

struct EscapeHatch {
  std::string mpi_launcher;  // path of lattice-mpi-launcher
  std::string launch_dir;    // the launch's private directory on this node
  std::string exec_socket;
  std::string token;
};

inline constexpr const char* kHydraHostFile = "hosts.hydra";
inline constexpr const char* kOpenMpiHostFile = "hosts.openmpi";

// An allocation's nodes for the hatch of its batch step (and of the commands its MPI
// launchers run through the user door): each with the same number of slots.
struct HatchHosts {
  std::vector<std::string> nodes;
  int slots = 1;
};

// "n1:2\nn2:2\n": each node with its rank count (Hydra's host file), or its slots.
std::string hydra_hosts(const LaunchSpec& spec);
std::string hydra_hosts(const HatchHosts& hosts);
// "n1 slots=2\nn2 slots=2\n" (Open MPI's hostfile).
std::string openmpi_hostfile(const LaunchSpec& spec);
std::string openmpi_hostfile(const HatchHosts& hosts);
// The variables every rank of the launch gets on this node.
std::vector<std::pair<std::string, std::string>> escape_environment(const EscapeHatch& hatch);
// Those, and what a command run here through the hatch (an orted, a Hydra proxy) needs.
std::vector<std::pair<std::string, std::string>> command_environment(const EscapeHatch& hatch);

}  // namespace lattice::agent
