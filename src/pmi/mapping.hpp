// PMI_process_mapping: which ranks share a node, in MPICH's notation
// `(vector,(first_node,node_count,ranks_per_node),...)`; the block list wraps when it runs out
// of ranks, which is how cyclic layouts are written. MPICH derives node-local communicators
// from it, and an empty or garbage value kills MPI_Init (docs/pmi-wire.md trap T2).
#pragma once

#include <string>
#include <vector>

namespace lattice::pmi {

// node_of_rank[r] = the node of rank r (any ids; they are renumbered in order of first
// appearance, so rank 0 is on node 0). Produces the shortest block list that, wrapped, gives
// back every rank's node: block `(vector,(0,2,2))`, cyclic `(vector,(0,2,1))`, uneven
// `(vector,(0,1,2),(1,1,3))`. Empty input gives "".
std::string process_mapping(const std::vector<int>& node_of_rank);

}  // namespace lattice::pmi
