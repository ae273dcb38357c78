// How a spawned launch reaches the launch that spawned it on this agent (MPI_Comm_spawn's
// children connecting back): its names and collectives are the parent's, at the parent's head
// (launch_family.hpp). The agent's launch table answers; a parent that has ended here is null.
#pragma once

#include <string>

#include "base/result.hpp"

namespace lattice::agent {

class LaunchNames;
class LaunchConnects;

// What a spawned launch's request gets when its parent has ended here.
inline Error parent_ended(const std::string& parent_id) {
  return make_error("launch " + parent_id + ", which spawned this one, has ended");
}

class ParentLaunches {
 public:
  virtual ~ParentLaunches() = default;
  virtual LaunchNames* names_of(const std::string& launch_id) = 0;
  virtual LaunchConnects* connects_of(const std::string& launch_id) = 0;
};

}  // namespace lattice::agent
