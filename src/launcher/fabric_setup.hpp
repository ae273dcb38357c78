// Whether a launch gets CXI credentials, and from where: --vni, --fabric-url and
// --fabric-token-file over the launcher's config file (--config, else $LATTICE_LAUNCHER_CONFIG).
// No VNI: no CXI. A VNI without a fabric manager or token is an error before anything starts,
// and so is a token file others can read.
#pragma once

#include <optional>
#include <string>

#include "base/result.hpp"
#include "launcher/cxi_lease.hpp"
#include "launcher/options.hpp"
#include "secure/secret.hpp"

namespace lattice::launcher {

struct FabricSetup {
  FabricSettings settings;
  std::optional<secure::Secret> token;  // none: the launch runs without CXI
  std::string note;                     // why not, for the debug log
};

// `config_env`: $LATTICE_LAUNCHER_CONFIG's value (null when unset).
Result<FabricSetup> fabric_setup(const LaunchOptions& options, const char* config_env);

}  // namespace lattice::launcher
