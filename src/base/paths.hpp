// Finding our own sibling executables: beside the running binary first (the build tree keeps
// lattice, lattice-agentd and lattice-rank-exec together), else where they are installed.
#pragma once

#include <string>

namespace lattice {

std::string self_dir();
std::string find_sibling(const std::string& name, const std::string& installed_dir);

}  // namespace lattice
