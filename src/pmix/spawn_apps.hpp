// PMIx_Spawn's arguments copied out of libpmix's structures (on libpmix's thread, so nothing
// here touches the agent): the apps with their PMIX_HOST and PMIX_WDIR, bounded.
#pragma once

#include <pmix_common.h>

#include <cstddef>

#include "base/result.hpp"
#include "pmix/server.hpp"

namespace lattice::pmix {

// An error when a count is beyond what any launch takes (wire/spawn_codec.hpp's bounds say
// what a launch takes; these only keep the copy bounded).
Result<SpawnCall> spawn_call(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                             size_t napps);

}  // namespace lattice::pmix
