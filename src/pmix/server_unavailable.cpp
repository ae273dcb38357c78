// Server::start in a build without libpmix (meson -Dpmix=disabled, or libpmix-dev missing):
// it says so, and nothing else in the agent needs to know.
#include "pmix/app_setup.hpp"
#include "pmix/server.hpp"

namespace lattice::pmix {

Result<std::unique_ptr<Server>> Server::start(const ServerOptions&, std::function<void()>) {
  return make_error(
      "PMIx (--pmi pmix) is not available: this agent was built without libpmix "
      "(meson -Dpmix=disabled, or libpmix-dev missing)");
}

Result<AppSetupAnswer> setup_application(const AppSetupAsk&) {
  return make_error(
      "PMIx (--pmi pmix) is not available: this launcher was built without libpmix "
      "(meson -Dpmix=disabled, or libpmix-dev missing)");
}

}  // namespace lattice::pmix
