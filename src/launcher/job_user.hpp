// The user a job runs as, resolved on the launcher's host (lattice-api's role): uid, primary
// gid, supplementary groups and name, sent in every LaunchProcesses. Agents check it against
// their own rules and passwd; the launcher only names it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

struct JobUserInfo {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary, from the group database
  std::string name;
};

// "NAME" or a numeric "UID"; empty means the invoking user (the real uid).
Result<JobUserInfo> resolve_job_user(const std::string& name_or_uid);

}  // namespace lattice::launcher
