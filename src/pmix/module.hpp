// What the agent and lattice-pmix.so agree on. libpmix and what it pulls in (libevent, hwloc's
// udev, munge, its MCA components and threads) are loaded only by the first --pmi pmix launch,
// as Slurm loads its mpi/pmix plugin: an agent that serves only PMI-1/PMI-2 never maps them
// (0.6 MiB of its resident memory), and a node without OpenPMIx installed still runs MPICH.
// libpmix is reached through a module of our own, not dlsym'd function by function as libcurl
// is (fabric/curl_library.hpp), because its API is used through macros (PMIX_INFO_LOAD, ...)
// that call its functions by name.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/log.hpp"
#include "base/result.hpp"
#include "pmix/app_setup.hpp"
#include "pmix/server.hpp"

namespace lattice::pmix {

// Installed in $libdir/lattice; the build tree keeps it beside lattice-agentd.
inline constexpr const char* kModuleFile = "lattice-pmix.so";
// The module's one exported symbol. Its name carries the version of this interface.
inline constexpr const char* kModuleEntry = "lattice_pmix_module_start_v1";

struct ModuleStart {
  // The agent's build (LATTICE_VERSION): a module of another version is refused, since both
  // sides share C++ types.
  std::string version;
  // The module has its own copy of base/ and so of the log settings.
  LogLevel log_level = LogLevel::info;
  std::string log_tag;
  ServerOptions options;
  std::function<void()> wake;
  Result<std::unique_ptr<Server>>* result = nullptr;
};

using ModuleEntry = void (*)(ModuleStart& start);

// The launcher's entry: RFC0029's PMIx_server_setup_application (app_setup.hpp).
inline constexpr const char* kAppSetupEntry = "lattice_pmix_app_setup_v1";

struct AppSetupCall {
  std::string version;  // as ModuleStart's
  const AppSetupAsk* ask = nullptr;
  Result<AppSetupAnswer>* result = nullptr;
};

using AppSetupEntry = void (*)(AppSetupCall& call);

// Inside the module (or a test linked with libpmix): starts the server in this process.
Result<std::unique_ptr<Server>> start_linked(const ServerOptions& options,
                                             std::function<void()> wake);

}  // namespace lattice::pmix
