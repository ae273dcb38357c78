#include "launcher/fabric_setup.hpp"

#include "base/strings.hpp"
#include "fabric/token_file.hpp"

namespace lattice::launcher {

Result<FabricSetup> fabric_setup(const LaunchOptions& options, const config::LauncherConfig& file) {
  FabricSetup setup;
  uint32_t vni = options.vni ? options.vni : file.vni;
  std::string url = !options.fabric_url.empty() ? options.fabric_url : file.fabric_url;
  std::string token_file =
      !options.fabric_token_file.empty() ? options.fabric_token_file : file.fabric_token_file;
  if (vni == 0) {
    setup.note = url.empty() ? "no fabric manager configured: the launch runs without CXI"
                             : "no VNI given (--vni): the launch runs without CXI";
    return setup;
  }
  if (url.empty())
    return make_error(cat("--vni ", vni, " needs the fabric manager: --fabric-url URL, or ",
                          "fabric.url in the launcher's config file (--config)"));
  if (token_file.empty())
    return make_error(cat("--vni ", vni, " needs the fabric manager's token: ",
                          "--fabric-token-file FILE, or fabric.token_file in --config"));
  auto token = fabric::read_token_file(token_file);
  if (!token) return token.error();
  setup.token = std::move(token.value());
  setup.settings.vni = vni;
  setup.settings.client = {url, static_cast<int>(file.fabric_attempts), 100};
  setup.settings.transport = {file.fabric_connect_timeout_ms, file.fabric_timeout_ms, 64 * 1024};
  return setup;
}

}  // namespace lattice::launcher
