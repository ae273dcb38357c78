#include "launcher/export_env.hpp"

#include <fnmatch.h>

#include <map>

#include "base/strings.hpp"
#include "proc/environment.hpp"

namespace lattice::launcher {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
      return false;
  return true;
}

}  // namespace

Result<Exported> export_environment(const std::string& spec,
                                    const std::vector<std::string>& environ) {
  bool all = false;
  std::vector<std::string> patterns;
  std::map<std::string, std::string> given, taken;  // a later assignment wins
  auto items = split(spec, ',');
  for (const auto& item : items) {
    if (item == "ALL") {
      all = true;
    } else if (item == "NONE") {
      if (items.size() > 1) return make_error("--export: NONE cannot be combined with anything");
    } else if (auto eq = item.find('='); eq != std::string::npos) {
      std::string name = item.substr(0, eq);
      if (!valid_name(name))
        return make_error(cat("--export: '", name, "' is not a variable name"));
      if (proc::reserved_env_name(name))
        return make_error(cat("--export: ", name, " is reserved for the launch"));
      given[name] = item.substr(eq + 1);
    } else if (!item.empty()) {
      patterns.push_back(item);
    } else {
      return make_error(cat("--export: empty item in '", spec, "'"));
    }
  }
  for (const auto& kv : environ) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    bool wanted = all;
    for (const auto& p : patterns) wanted = wanted || ::fnmatch(p.c_str(), name.c_str(), 0) == 0;
    // Shell functions (BASH_FUNC_x%%) and the launch's own names are not the job's to pass.
    if (!wanted || !valid_name(name) || proc::reserved_env_name(name) || given.count(name))
      continue;
    taken[name] = kv.substr(eq + 1);
  }
  return Exported{EnvList(taken.begin(), taken.end()), EnvList(given.begin(), given.end())};
}

}  // namespace lattice::launcher
