// Executable lookup as execvp does it, but done up front and relative to the launch's cwd.
#include "proc/executable.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// What glibc's execvp searches when PATH is unset; an empty PATH must not mean "the cwd".
constexpr const char* kDefaultPath = "/bin:/usr/bin";

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> resolve_executable(const std::string& name, const std::string& path_env,
                                              const std::string& cwd) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' || cwd.empty() ? name : cat(cwd, '/', name);
    return executable_file(path) ? std::optional<std::string>(path) : std::nullopt;
  }
  for (const auto& dir : split(path_env.empty() ? kDefaultPath : path_env, ':')) {
    // An empty PATH entry means the current directory, as execvp reads it.
    std::string base = dir.empty() ? (cwd.empty() ? "." : cwd)
                                   : (dir[0] == '/' || cwd.empty() ? dir : cat(cwd, '/', dir));
    std::string path = cat(base, '/', name);
    if (executable_file(path)) return path;
  }
  return std::nullopt;
}

}  // namespace lattice::proc
