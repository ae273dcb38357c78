// The names a launch's ranks published (MPI_Publish_name), held by the launch's head agent for
// all its nodes. Pure and bounded: the head takes requests from every node of the launch.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "base/result.hpp"
#include "pmi/server.hpp"

namespace lattice::agent {

// Names one launch may hold: far beyond what MPI programs publish, small next to memory.
inline constexpr size_t kMaxPublishedNames = 4096;

class NameRegistry {
 public:
  // publish: "" or an error (taken, too many, too long); unpublish: "" or "not published";
  // lookup: the port, or "not published" at once (as Hydra answers: no waiting).
  Result<std::string> apply(pmi::NameOp op, const std::string& name, const std::string& port);

 private:
  std::map<std::string, std::string> names_;
};

}  // namespace lattice::agent
