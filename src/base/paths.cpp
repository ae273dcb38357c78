#include "base/paths.hpp"

#include <limits.h>
#include <unistd.h>

namespace lattice {

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::string find_sibling(const std::string& name, const std::string& installed_dir) {
  std::string beside = self_dir() + "/" + name;
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  return installed_dir + "/" + name;
}

}  // namespace lattice
