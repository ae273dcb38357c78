// Where a rank's PMIx_Spawn puts its children, and with what options: a launch of their own on
// the parent's nodes (those its PMIX_HOST names, else all), laid out in blocks as `-N k -n m`
// would be, as the parent's user, with the parent's options for what the children share (time
// limit, binding, output handling) and none of the parent's input. Pure.
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "launcher/layout.hpp"
#include "launcher/options.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::launcher {

struct SpawnPlan {
  LaunchOptions options;   // the children's launch
  Layout layout;           // over `nodes`
  std::vector<int> nodes;  // the parent's node index of each of the children's nodes
};

// `node_ids`: the parent's nodes, by node index. An error names a host that is none of them.
Result<SpawnPlan> spawn_plan(const LaunchOptions& parent, const std::vector<std::string>& node_ids,
                             const wire::SpawnRequest& request);

}  // namespace lattice::launcher
