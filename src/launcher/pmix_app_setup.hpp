// RFC0029 in the launcher: for a --pmi pmix launch, what libpmix's PMIx_server_setup_application
// returns for the launch's namespace (pmix/app_setup.hpp), as AppSetup.vendor carries it.
// libpmix is loaded only here, only for such a launch, and its server lives for this one call.
// What libpmix forwards of this process's environment (its own PMIX_MCA_* settings) travels
// unless --export is NONE.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.hpp"

namespace lattice::launcher {

// `exports`: --export's value. An empty result when libpmix returned nothing Lattice carries;
// an error when libpmix could not be asked (the caller goes on without it, saying so).
Result<std::string> pmix_app_setup(const std::string& launch_id, uint32_t uid,
                                   const std::string& exports);

}  // namespace lattice::launcher
