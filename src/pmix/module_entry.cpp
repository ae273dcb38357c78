// lattice-pmix.so's entry (module.hpp): built into the module itself, as every other symbol it
// carries is hidden.
#include <type_traits>

#include "lattice_version.h"
#include "pmix/module.hpp"

extern "C" __attribute__((visibility("default"))) void lattice_pmix_module_start_v1(
    lattice::pmix::ModuleStart& call) {
  using namespace lattice;
  if (call.version != LATTICE_VERSION) {
    *call.result =
        make_error(cat("PMIx (--pmi pmix) is not available: ", pmix::kModuleFile, " is of Lattice ",
                       LATTICE_VERSION, ", the agent of ", call.version));
    return;
  }
  set_log_level(call.log_level);
  set_log_tag(call.log_tag);
  *call.result = pmix::start_linked(call.options, std::move(call.wake));
}

static_assert(std::is_same_v<decltype(&lattice_pmix_module_start_v1), lattice::pmix::ModuleEntry>);

extern "C" __attribute__((visibility("default"))) void lattice_pmix_app_setup_v1(
    lattice::pmix::AppSetupCall& call) {
  using namespace lattice;
  if (call.version != LATTICE_VERSION) {
    *call.result = make_error(cat(pmix::kModuleFile, " is of Lattice ", LATTICE_VERSION,
                                  ", the launcher of ", call.version));
    return;
  }
  *call.result = pmix::setup_application_linked(*call.ask);
}

static_assert(std::is_same_v<decltype(&lattice_pmix_app_setup_v1), lattice::pmix::AppSetupEntry>);
