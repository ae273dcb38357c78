// rank_environment: one sorted map, filled in precedence order (agent's scrubbed base, then the
// user's --env, then the launch's own variables), so later keys win and none is duplicated.
#include "proc/environment.hpp"

#include <map>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// Names only the launch may set: a user's PMI_* or PMIX_* would confuse the rank's PMI client
// (pmi-wire.md T4) and LATTICE_* describe the launch itself.
bool reserved(const std::string& name) {
  return starts_with(name, "PMI_") || starts_with(name, "PMIX_") || starts_with(name, "LATTICE_");
}

bool scrubbed(const std::string& name, bool slurm_compat) {
  return reserved(name) || (!slurm_compat && starts_with(name, "SLURM_"));
}

}  // namespace

std::vector<std::string> rank_environment(const std::vector<std::string>& base,
                                          const RankEnvInput& in) {
  std::map<std::string, std::string> env;  // later writes win; sorted output is deterministic
  for (const auto& kv : base) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = kv.substr(0, eq);
    if (!scrubbed(name, in.slurm_compat)) env[name] = kv.substr(eq + 1);
  }
  // The user's values win over the agent's; the launch's own variables below win over both.
  // PMIX_* is never passed: beside PMI_SIZE it makes MPICH abort (T4).
  for (const auto& [name, value] : in.user_env)
    if (!name.empty() && name.find('=') == std::string::npos && !starts_with(name, "PMIX_"))
      env[name] = value;

  if (in.pmi_fd >= 0) {
    env["PMI_FD"] = std::to_string(in.pmi_fd);
  } else {
    env["PMI_PORT"] = in.pmi_port;
    env["PMI_ID"] = std::to_string(in.rank);
  }
  env["PMI_RANK"] = std::to_string(in.rank);
  env["PMI_SIZE"] = std::to_string(in.world_size);
  env["PMI_SPAWNED"] = "0";
  env["PMI_JOBID"] = in.jobid;
  env["LATTICE_LAUNCH_ID"] = in.launch_id;
  env["LATTICE_ALLOC_ID"] = in.allocation_id;
  env["LATTICE_NODELIST"] = in.nodelist;
  env["LATTICE_NNODES"] = std::to_string(in.nnodes);
  env["LATTICE_NPROCS"] = std::to_string(in.world_size);
  env["LATTICE_LOCAL_RANK"] = std::to_string(in.local_rank);
  env["LATTICE_LOCAL_SIZE"] = std::to_string(in.local_size);
  if (in.slurm_compat) {
    env["SLURM_PROCID"] = std::to_string(in.rank);
    env["SLURM_NPROCS"] = std::to_string(in.world_size);
    env["SLURM_NTASKS"] = std::to_string(in.world_size);
    env["SLURM_LOCALID"] = std::to_string(in.local_rank);
    env["SLURM_NODEID"] = std::to_string(in.node_index);
    env["SLURM_NNODES"] = std::to_string(in.nnodes);
    env["SLURM_NODELIST"] = in.nodelist;
    env["SLURM_STEP_NUM_TASKS"] = std::to_string(in.world_size);
  }

  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(cat(name, '=', value));
  return out;
}

}  // namespace lattice::proc
