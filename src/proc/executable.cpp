#include "proc/executable.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

bool executable_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> resolve_executable(const std::string& name, const std::string& path_env,
                                              const std::string& cwd) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' ? name : cat(cwd, '/', name);
    return executable_file(path) ? std::optional<std::string>(path) : std::nullopt;
  }
  for (const auto& dir : split(path_env, ':')) {
    std::string base = dir.empty() ? cwd : (dir[0] == '/' ? dir : cat(cwd, '/', dir));
    std::string path = cat(base, '/', name);
    if (executable_file(path)) return path;
  }
  return std::nullopt;
}

}  // namespace lattice::proc
