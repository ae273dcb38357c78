// security.revoked (secure/revocation.hpp), read when the agent starts and on SIGHUP.
#pragma once

#include "base/result.hpp"
#include "config/config.hpp"
#include "secure/revocation.hpp"

namespace lattice::agent {

// The revoked keys `cfg` names (none when unset); an error names the file, or says that
// revocations need an authority to mean anything.
Result<secure::RevokedKeys> load_revocations(const config::AgentConfig& cfg);

}  // namespace lattice::agent
