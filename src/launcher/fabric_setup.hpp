// Whether a launch gets CXI credentials, and from where: --vni, --fabric-url and
// --fabric-token-file over the launcher's config file.
// No VNI: no CXI. A VNI without a fabric manager or token is an error before anything starts,
// and so is a token file others can read.
#pragma once

#include <optional>
#include <string>

#include "base/result.hpp"
#include "config/launcher_config.hpp"
#include "launcher/cxi_lease.hpp"
#include "launcher/options.hpp"
#include "secure/secret.hpp"

namespace lattice::launcher {

struct FabricSetup {
  FabricSettings settings;
  std::optional<secure::Secret> token;  // none: the launch runs without CXI
  std::string note;                     // why not, for the debug log
};

// `file`: the launcher's configuration (launcher_file.hpp).
Result<FabricSetup> fabric_setup(const LaunchOptions& options, const config::LauncherConfig& file);

}  // namespace lattice::launcher
