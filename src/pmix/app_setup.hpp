// RFC0029 through libpmix 4.2.2: the launcher asks PMIx_server_setup_application for a launch's
// namespace, the answer travels in the launch request (app_setup_codec.hpp), and every agent
// hands it to PMIx_server_setup_local_support before it starts the ranks (Server::
// setup_local_support), for libpmix's fabric plugins to prepare each node.
//
// What libpmix 4.2.2 answers (pmix_server.c, _setup_app): its pnet plugins' data (Debian's
// build has one, opa, active only beside an Intel Omni-Path adapter; none for CXI, no sshot), then
// its pmdl plugins' (Open MPI's and OpenSHMEM's, only for a personality, which Lattice does not
// give), then one PMIX_SET_ENVAR entry per PMIX_MCA_* variable of the launcher's environment (the
// MCA settings of libpmix itself, which mpirun forwards so: pmdl/base, harvest_envars). Lattice
// carries the PMIX_SET_ENVAR entries, and says which others it left out. PMIx_server_setup_local_
// support passes entries to the pnet plugins only, so the agent also sets those variables in the
// ranks' environment itself, as PRRTE does with them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "pmix/app_setup_codec.hpp"

namespace lattice::pmix {

// The entries Lattice carries: PMIX_SET_ENVAR's key, one variable each, named so.
inline constexpr const char* kSetEnvarKey = "pmix.envar.set";
inline constexpr const char* kForwardedPrefix = "PMIX_MCA_";

struct AppSetupAsk {
  std::string nspace;
  uint32_t uid = 0;
  std::string tmpdir;  // the server's own directory, private, made and removed by the caller
};

struct AppSetupAnswer {
  std::vector<SetupEntry> entries;    // of kSetEnvarKey
  std::vector<std::string> left_out;  // keys of what libpmix returned and Lattice does not carry
};

// In the launcher: loads lattice-pmix.so (module.hpp) and asks libpmix there, through a server
// of this process's own, initialised for the call and finalised after it.
Result<AppSetupAnswer> setup_application(const AppSetupAsk& ask);
// The same inside the module.
Result<AppSetupAnswer> setup_application_linked(const AppSetupAsk& ask);

}  // namespace lattice::pmix
