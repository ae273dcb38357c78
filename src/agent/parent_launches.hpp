// How a spawned launch reaches the first launch of its family on this agent (MPI_Comm_spawn's
// children connecting back): every generation's names and collectives are the first launch's,
// at its head, and so is the word of a later generation (launch_family.hpp). The agent's launch
// table answers; a launch that has ended here is null.
#pragma once

#include <functional>
#include <string>

#include "base/result.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::agent {

class LaunchNames;
class LaunchConnects;

// What a spawned launch's request gets when its family's first launch has ended here.
inline Error parent_ended(const std::string& family_id) {
  return make_error("launch " + family_id + ", the first of this one's family, has ended");
}

class ParentLaunches {
 public:
  virtual ~ParentLaunches() = default;
  virtual LaunchNames* names_of(const std::string& launch_id) = 0;
  virtual LaunchConnects* connects_of(const std::string& launch_id) = 0;
  // A spawned launch of the family's launch `family_id` spawned `child`: `answer` once every
  // node of `family_id` knows it (its id), or why not.
  virtual void family_grew(const std::string& family_id, wire::SpawnedLaunch child,
                           std::function<void(Result<std::string>)> answer) = 0;
};

}  // namespace lattice::agent
