#include "agent/rank_resources.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

Result<std::vector<RankResources>> rank_resources(const LaunchSpec& spec, size_t local_ranks,
                                                  const NodeResources& node) {
  std::vector<RankResources> out(local_ranks);
  const bool has_topology = node.topology && *node.topology;
  proc::Topology topology;
  if (has_topology)
    topology = node.launch_cpus.empty()
                   ? node.topology->value()
                   : proc::restrict_to(node.topology->value(), node.launch_cpus);
  const size_t cpus = has_topology               ? topology.pus.size()
                      : node.launch_cpus.empty() ? node.agent_cpus
                                                 : node.launch_cpus.size();
  if (auto fits = proc::check_cpus_fit(static_cast<int>(local_ranks), spec.cpus_per_task, cpus,
                                       node.node_id);
      !fits)
    return fits.error();

  if (spec.cpu_bind.kind != proc::CpuBind::Kind::none) {
    if (!has_topology)
      return make_error(cat("--cpu-bind on ", node.node_id, ": ",
                            node.topology ? node.topology->error().message : "no topology"));
    for (size_t i = 0; i < local_ranks; ++i) {
      auto bound = proc::cpus_for(spec.cpu_bind, topology, static_cast<int>(i), spec.cpus_per_task);
      if (!bound)
        return make_error(cat("--cpu-bind on ", node.node_id, ": ", bound.error().message));
      out[i].cpus = std::move(bound.value());
    }
  }

  if (spec.gpus.any()) {
    std::vector<int> numa;
    for (const auto& rank : out) numa.push_back(proc::numa_of(topology, rank.cpus));
    static const std::vector<proc::Gpu> kNone;
    auto gpus = proc::assign_gpus(spec.gpus, node.gpus ? *node.gpus : kNone, numa, node.node_id);
    if (!gpus) return gpus.error();
    for (size_t i = 0; i < local_ranks; ++i) out[i].gpu_env = proc::gpu_environment((*gpus)[i]);
  }
  return out;
}

}  // namespace lattice::agent
