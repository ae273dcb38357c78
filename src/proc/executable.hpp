// Finds the program a launch names, before anything is spawned, so that a typo is one clear
// refusal instead of N ranks failing to exec.
#pragma once

#include <string>

#include "base/result.hpp"

namespace lattice::proc {

// A name with '/' is taken as a path (relative to `cwd`); a bare name is searched on `path_env`
// ("/bin:/usr/bin" when empty, as execvp does without PATH; empty entries mean `cwd`).
// Returns the path of an executable regular file (absolute when cwd is), or why there is none,
// in words that tell the cases apart: "not found", "not found on PATH (DIRS)", "PATH is a
// directory", "PATH is not executable (mode 0644)". An empty cwd means the agent's own.
Result<std::string> resolve_executable(const std::string& name, const std::string& path_env,
                                       const std::string& cwd);

}  // namespace lattice::proc
