// Test helper: runs a program to completion with an exact environment and collects what it
// printed. The proc layer has no event loop, so this is plain posix_spawn, poll and waitpid.
#pragma once

#include <string>
#include <vector>

namespace lattice::proc::test {

struct Ran {
  int status = -1;  // exit code, or 128 + signal as shells report it
  std::string out, err;
};

Ran run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace lattice::proc::test
