// What of the launcher's environment reaches the ranks (srun's --export): ALL by default, NONE,
// or a list of names with * and ? wildcards and NAME=VALUE assignments. The launch's own
// variables (PMI_*, PMIX_*, LATTICE_*, FI_CXI_*) never travel: taken from the environment they
// are skipped, assigned they are an error (agents would refuse them). What a root job may get
// is the agents' to judge (their security.allow_root_job_env): they leave hooks out of what
// was taken from the environment and refuse those assigned, as they refuse them from --env.
// Pure: the caller passes its environment.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct Exported {
  EnvList harvested;  // taken from the environment, sorted (AppSetup.environment)
  EnvList assigned;   // NAME=VALUE items, sorted: given explicitly, as --env's values are
};

// `spec` is --export's value; `environ` the launcher's "K=V" strings. A name both taken and
// assigned is only assigned.
Result<Exported> export_environment(const std::string& spec,
                                    const std::vector<std::string>& environ);

}  // namespace lattice::launcher
