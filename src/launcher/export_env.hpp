// What of the launcher's environment reaches the ranks (srun's --export): ALL by default, NONE,
// or a list of names with * and ? wildcards and NAME=VALUE assignments. The launch's own
// variables (PMI_*, PMIX_*, LATTICE_*, FI_CXI_*) never travel: taken from the environment they
// are skipped, assigned they are an error (agents would refuse them). Dynamic-loader variables
// do not travel into a root job: skipped from the environment (the caller warns), an error when
// assigned.
// Pure: the caller passes its environment.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct Exported {
  EnvList env;
  std::vector<std::string> dropped_loader;  // loader variables left out of a root job
};

// `spec` is --export's value; `environ` the launcher's "K=V" strings.
Result<Exported> export_environment(const std::string& spec,
                                    const std::vector<std::string>& environ, bool root_job);

}  // namespace lattice::launcher
