// The launcher's configuration file (--config, else $LATTICE_LAUNCHER_CONFIG, else none: the
// built-in defaults), read once per launch, and what it settles that the flags leave open.
#pragma once

#include "base/result.hpp"
#include "config/launcher_config.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

// `config_env`: $LATTICE_LAUNCHER_CONFIG's value (null when unset).
Result<config::LauncherConfig> load_launcher_file(const LaunchOptions& options,
                                                  const char* config_env);

// The launch's fence fanout and timeout: the flags', else the file's. Every agent then gets
// the same, whatever its own configuration says, so that all build one tree.
void settle_fence(LaunchOptions& options, const config::LauncherConfig& file);

}  // namespace lattice::launcher
