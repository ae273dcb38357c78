// Why a launch failed, as the agents and the launcher pass it around: the first failure is the
// launch's reason and, through exit_code, the job's exit status.
#pragma once

#include <cstdint>
#include <string>

namespace lattice::policy {

struct Failure {
  std::string reason;        // e.g. "rank 3 on n1 exited with status 7"
  int exit_code = 1;         // the job status it implies
  int rank = -1;             // -1: not one rank's doing (lost node, timeout, refusal)
  uint64_t fence_epoch = 0;  // non-zero: a timeout of this fence (report its stragglers)
  std::string node = {};     // node id where it happened ("" = the launcher, or unknown)
};

}  // namespace lattice::policy
