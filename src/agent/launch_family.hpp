// The launches a launch spawned (PMIx_Spawn), as every node of the parent knows them once its
// head has said (PmixFamily): each child's node, as an index into the parent's nodes. The
// parent's names and collectives (at its head) serve its children too, which is how
// MPI_Comm_spawn's children connect back; ProcNodes over the family is what the head checks and
// tallies against.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "agent/pmix_procs.hpp"
#include "base/result.hpp"

namespace lattice::agent {

// At most this many spawned launches per launch are remembered (a rank spawning in a loop
// gets an error beyond it, not the agent's memory).
inline constexpr size_t kMaxSpawnedLaunches = 256;

class LaunchFamily {
 public:
  // `spec` (the parent's) must outlive it.
  explicit LaunchFamily(const LaunchSpec& spec) : spec_(spec) {}

  // Spawned launch `child_id`'s layout; an error for a node that is not the parent's, an empty
  // layout, a launch already known, or one beyond kMaxSpawnedLaunches.
  Status add(const std::string& child_id, const std::vector<uint32_t>& rank_nodes);
  // A child's layout by its namespace, or null.
  const std::vector<int>* layout_of(const std::string& nspace) const;
  // The parent's namespace and its children's.
  ProcNodes proc_nodes() const;

 private:
  const LaunchSpec& spec_;
  std::map<std::string, std::vector<int>> children_;  // by namespace
};

}  // namespace lattice::agent
