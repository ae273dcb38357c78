// Resource limits by the names srun and Slurm's PropagateResourceLimits use (AS, CORE, CPU,
// DATA, FSIZE, MEMLOCK, NOFILE, NPROC, RSS, STACK): the launcher sends its soft limits, and
// each agent gives ranks those its configuration propagates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

// The propagated resources, in the wire protocol's order (schema Resource).
enum class Resource { as, core, cpu, data, fsize, memlock, nofile, nproc, rss, stack };
inline constexpr int kResourceCount = 10;

std::string_view resource_name(Resource r);  // "NOFILE"
int rlimit_of(Resource r);                   // RLIMIT_NOFILE

struct Limit {
  Resource resource = Resource::nofile;
  uint64_t soft = 0;  // UINT64_MAX: unlimited
};

// This process's soft limits, for every resource.
std::vector<Limit> own_soft_limits();
// This process's umask (ranks inherit the launcher's, as srun's tasks do).
uint32_t own_umask();

// "ALL", "NONE" or a comma list of names (case-insensitive), as Slurm's
// PropagateResourceLimits; an error names what is not a resource.
Result<std::vector<Resource>> parse_propagated(std::string_view text);
std::string describe_propagated(const std::vector<Resource>& resources);  // "ALL", "NOFILE,STACK"

}  // namespace lattice::proc
