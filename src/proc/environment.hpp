// A rank's environment: the agent's own, scrubbed of every PMI_*/PMIX_* variable (and SLURM_*
// unless compat is on), plus the user's --env values, plus the PMI and LATTICE_* variables of
// the launch. A rank never sees PMIX_* beside PMI_SIZE (pmi-wire.md T4), nor a stale PMI_* of
// the agent's. User values override the agent's but never the launch's own variables (PMI_*,
// LATTICE_* and, with slurm_compat, SLURM_* set below win); a user PMIX_* is dropped.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lattice::proc {

struct RankEnvInput {
  int rank = 0, world_size = 0, local_rank = 0, local_size = 0, node_index = 0, nnodes = 0;
  int pmi_fd = -1;       // -1: PMI_PORT mode
  std::string pmi_port;  // "127.0.0.1:PORT" in PMI_PORT mode (PMI_ID = rank)
  std::string jobid, launch_id, allocation_id, nodelist;
  bool slurm_compat = false;
  std::vector<std::pair<std::string, std::string>> user_env;
};

std::vector<std::string> rank_environment(const std::vector<std::string>& base,
                                          const RankEnvInput& in);

}  // namespace lattice::proc
