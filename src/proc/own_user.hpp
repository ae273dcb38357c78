// Who this process runs as, from passwd, read once at start: ranks that need no switch of user
// are started directly (one exec), and get HOME, USER, LOGNAME and SHELL from here as
// lattice-rank-exec would set them from passwd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

struct ProcessUser {
  uint32_t uid = 0, gid = 0;  // effective
  std::string name, home, shell;
  std::vector<uint32_t> groups;        // supplementary, as this process has them; sorted
  std::vector<uint32_t> login_groups;  // what initgroups(name, gid) would give; sorted
};

// Reads passwd and the group database (may block on NSS: call it before the loop runs).
Result<ProcessUser> own_user();

// What initgroups(name, gid) would give (gid among them), in the group database's order.
Result<std::vector<uint32_t>> login_groups(const char* name, uint32_t gid);

// True when a process for the job's user (uid, gid, name, and the explicit supplementary groups
// if any) can start as this process is, with nothing to switch: the ids and name agree and, for
// root (which lattice-rank-exec would give the job's groups), so do the groups.
bool runs_as(const ProcessUser& self, uint32_t uid, uint32_t gid, const std::string& name,
             const std::optional<std::vector<uint32_t>>& groups);

// HOME, USER, LOGNAME and SHELL (when passwd has one) from `self`, replacing any in `env`.
void set_user_variables(std::vector<std::string>& env, const ProcessUser& self);

}  // namespace lattice::proc
