// Executable lookup as execvp does it, but done up front and relative to the launch's cwd.
#include "proc/executable.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// What glibc's execvp searches when PATH is unset; an empty PATH must not mean "the cwd".
constexpr const char* kDefaultPath = "/bin:/usr/bin";

// Empty when `path` is an executable regular file; else why not (empty `why` for "absent").
std::string unusable(const std::string& path, bool& absent) {
  struct stat st {};
  absent = ::stat(path.c_str(), &st) != 0;
  if (absent) return "not found";
  if (S_ISDIR(st.st_mode)) return cat(path, " is a directory");
  if (!S_ISREG(st.st_mode)) return cat(path, " is not a regular file");
  if (::access(path.c_str(), X_OK) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return cat(path, " is not executable (mode ", mode, ")");
  }
  return "";
}

}  // namespace

Result<std::string> resolve_executable(const std::string& name, const std::string& path_env,
                                       const std::string& cwd) {
  if (name.empty()) return make_error("no program named");
  bool absent = false;
  if (name.find('/') != std::string::npos) {
    std::string path = name[0] == '/' || cwd.empty() ? name : cat(cwd, '/', name);
    std::string why = unusable(path, absent);
    if (why.empty()) return path;
    return make_error(absent ? cat(path, ": not found") : why);
  }
  const std::string dirs = path_env.empty() ? kDefaultPath : path_env;
  std::string first_unusable;  // a file of that name that cannot run says more than "not found"
  for (const auto& dir : split(dirs, ':')) {
    // An empty PATH entry means the current directory, as execvp reads it.
    std::string base = dir.empty() ? (cwd.empty() ? "." : cwd)
                                   : (dir[0] == '/' || cwd.empty() ? dir : cat(cwd, '/', dir));
    std::string path = cat(base, '/', name);
    std::string why = unusable(path, absent);
    if (why.empty()) return path;
    if (!absent && first_unusable.empty()) first_unusable = why;
  }
  if (!first_unusable.empty()) return make_error(first_unusable);
  return make_error(cat("not found on PATH (", dirs, ")"));
}

}  // namespace lattice::proc
