#include "agent/escape_hatch.hpp"

#include "base/strings.hpp"

namespace lattice::agent {
namespace {

std::vector<int> ranks_per_node(const LaunchSpec& spec) {
  std::vector<int> counts(spec.peers.size(), 0);
  for (int node : spec.rank_nodes) ++counts[static_cast<size_t>(node)];
  return counts;
}

// One line per node, from its id and rank count: O(M) on every agent of a launch, so written
// straight into one string.
std::string per_node(const LaunchSpec& spec, std::string_view between) {
  auto counts = ranks_per_node(spec);
  std::string out;
  spec.peers.for_each_id([&](size_t node, std::string_view id) {
    out += id;
    out += between;
    out += std::to_string(counts[node]);
    out += '\n';
  });
  return out;
}

std::string per_node(const HatchHosts& hosts, std::string_view between) {
  std::string out;
  for (const auto& node : hosts.nodes) out += cat(node, between, hosts.slots, '\n');
  return out;
}

}  // namespace

std::string hydra_hosts(const LaunchSpec& spec) { return per_node(spec, ":"); }
std::string hydra_hosts(const HatchHosts& hosts) { return per_node(hosts, ":"); }
std::string openmpi_hostfile(const LaunchSpec& spec) { return per_node(spec, " slots="); }
std::string openmpi_hostfile(const HatchHosts& hosts) { return per_node(hosts, " slots="); }

std::vector<std::pair<std::string, std::string>> escape_environment(const EscapeHatch& hatch) {
  return {
      {"LATTICE_EXEC_SOCKET", hatch.exec_socket},
      {"LATTICE_EXEC_TOKEN", hatch.token},
      // Hydra: "ssh" decides the command's shape (`PROG -x HOST CMD`); PROG is ours.
      {"HYDRA_LAUNCHER", "ssh"},
      {"HYDRA_LAUNCHER_EXEC", hatch.mpi_launcher},
      {"HYDRA_HOST_FILE", cat(hatch.launch_dir, '/', kHydraHostFile)},
      // Open MPI 4.1: `PROG HOST orted ...`.
      {"OMPI_MCA_plm_rsh_agent", hatch.mpi_launcher},
      {"OMPI_MCA_orte_default_hostfile", cat(hatch.launch_dir, '/', kOpenMpiHostFile)},
  };
}

std::vector<std::pair<std::string, std::string>> command_environment(const EscapeHatch& hatch) {
  auto env = escape_environment(hatch);
  // An orted's session and shared-memory files in this node's launch directory: removed with
  // it, and never shared by two nodes simulated on one host (docs/pmi-wire.md §7). Not in the
  // ranks' variables: mpirun passes its own OMPI_MCA_* to every node's processes.
  env.emplace_back("OMPI_MCA_orte_tmpdir_base", hatch.launch_dir);
  env.emplace_back("OMPI_MCA_btl_vader_backing_directory", hatch.launch_dir);
  return env;
}

}  // namespace lattice::agent
