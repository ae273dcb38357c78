// The loader of lattice-pmix.so (module.hpp), in a build with libpmix: Server::start in the
// agent, setup_application in the launcher.
#include <dlfcn.h>

#include "base/paths.hpp"
#include "base/strings.hpp"
#include "lattice_version.h"
#include "pmix/module.hpp"

namespace lattice::pmix {

namespace {

// The module's entry `name`. Never closed: libpmix's threads and its finalize (in the server's
// destructor) run its code until the process exits. A second dlopen of a loaded module only
// counts a reference.
Result<void*> module_entry(const char* name) {
  std::string path = find_sibling(kModuleFile, LATTICE_PKGLIBDIR);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = ::dlerror();  // names the file that failed: the module or a library of it
    if (why.rfind(path, 0) != 0) why = cat(path, ": ", why);
    return make_error(cat("PMIx (--pmi pmix) is not available: cannot load ", why));
  }
  void* entry = ::dlsym(handle, name);
  if (!entry)
    return make_error(cat("PMIx (--pmi pmix) is not available: ", path, " has no ", name,
                          " (a module of another Lattice version?)"));
  return entry;
}

}  // namespace

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options,
                                              std::function<void()> wake) {
  auto entry = module_entry(kModuleEntry);
  if (!entry) return entry.error();
  Result<std::unique_ptr<Server>> result = make_error("the PMIx module gave no answer");
  ModuleStart call{LATTICE_VERSION, log_level(), log_tag(), options, std::move(wake), &result};
  reinterpret_cast<ModuleEntry> (*entry)(call);
  return result;
}

Result<AppSetupAnswer> setup_application(const AppSetupAsk& ask) {
  auto entry = module_entry(kAppSetupEntry);
  if (!entry) return entry.error();
  Result<AppSetupAnswer> result = make_error("the PMIx module gave no answer");
  AppSetupCall call{LATTICE_VERSION, &ask, &result};
  reinterpret_cast<AppSetupEntry> (*entry)(call);
  return result;
}

}  // namespace lattice::pmix
