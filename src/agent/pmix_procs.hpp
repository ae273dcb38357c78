// Where a launch's PMIx procs run: the one place a namespace and a rank become node indices,
// for the head's collectives (connect_tally.hpp) and its checks of who asks. Namespaces a launch
// starts later (spawn) plug in here; today a launch has one, "lattice.<launch id>".
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "wire/connect_codec.hpp"

namespace lattice::agent {

// The PMIx namespace of launch `launch_id`, and of `spec`'s launch.
std::string namespace_of(const std::string& launch_id);
std::string launch_nspace(const LaunchSpec& spec);

// The nodes hosting (nspace, rank); rank wire::kEveryRank: every node with a rank of nspace.
using ProcNodes = std::function<Result<std::set<int>>(const std::string& nspace, int rank)>;

// The launch's own namespace; any other is unknown (an error).
ProcNodes launch_proc_nodes(const LaunchSpec& spec);

// Every node hosting one of `procs`; the first proc that names nobody is the error.
Result<std::set<int>> participant_nodes(const std::vector<wire::CollectiveProc>& procs,
                                        const ProcNodes& nodes_of);

}  // namespace lattice::agent
