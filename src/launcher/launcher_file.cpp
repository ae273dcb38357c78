#include "launcher/launcher_file.hpp"

namespace lattice::launcher {

Result<config::LauncherConfig> load_launcher_file(const LaunchOptions& options,
                                                  const char* config_env) {
  std::string path = !options.config_file.empty() ? options.config_file
                     : config_env && *config_env  ? config_env
                                                  : "";
  if (path.empty()) return config::LauncherConfig{};
  return config::load_launcher_config(path);
}

void settle_fence(LaunchOptions& options, const config::LauncherConfig& file) {
  if (!options.fanout) options.fanout = file.fence_fanout;
  if (!options.fence_timeout_ms) options.fence_timeout_ms = file.fence_timeout_ms;
}

}  // namespace lattice::launcher
