// Finds the program a launch names, before anything is spawned, so that a typo is one clear
// refusal instead of N ranks failing to exec.
#pragma once

#include <optional>
#include <string>

namespace lattice::proc {

// A name with '/' is taken as a path (relative to `cwd`); a bare name is searched on `path_env`.
// Returns an absolute path to an executable regular file, or nullopt.
std::optional<std::string> resolve_executable(const std::string& name, const std::string& path_env,
                                              const std::string& cwd);

}  // namespace lattice::proc
