// Server::start in an agent built with libpmix: loads lattice-pmix.so (module.hpp) and starts
// the server there.
#include <dlfcn.h>

#include "base/paths.hpp"
#include "base/strings.hpp"
#include "lattice_version.h"
#include "pmix/module.hpp"

namespace lattice::pmix {

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options,
                                              std::function<void()> wake) {
  std::string path = find_sibling(kModuleFile, LATTICE_PKGLIBDIR);
  // Never closed: libpmix's threads and its finalize (in the server's destructor) run its code
  // until the agent exits. A second dlopen of a loaded module only counts a reference.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = ::dlerror();  // names the file that failed: the module or a library of it
    if (why.rfind(path, 0) != 0) why = cat(path, ": ", why);
    return make_error(cat("PMIx (--pmi pmix) is not available: cannot load ", why));
  }
  auto entry = reinterpret_cast<ModuleEntry>(::dlsym(handle, kModuleEntry));
  if (!entry)
    return make_error(cat("PMIx (--pmi pmix) is not available: ", path, " has no ", kModuleEntry,
                          " (a module of another Lattice version?)"));
  Result<std::unique_ptr<Server>> result = make_error("the PMIx module gave no answer");
  ModuleStart call{LATTICE_VERSION, log_level(), log_tag(), options, std::move(wake), &result};
  entry(call);
  return result;
}

}  // namespace lattice::pmix
