// A launch's spec as the node `self` of `nodes` (n0, n1, ...) sees it: head n0, fanout 2, so
// n0 -> n1, n2; n1 -> n3, n4; ... Shared by the tests of who may do what along the tree.
#pragma once

#include <vector>

#include "agent/launch_spec.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

inline LaunchSpec tree_spec(int nodes, int self) {
  LaunchSpec spec;
  spec.launch_id = "L";
  std::vector<Peer> peers;
  for (int i = 0; i < nodes; ++i) peers.push_back(Peer{cat('n', i), "h", 1});
  spec.peers = PeerTable(peers);
  spec.node_index = self;
  spec.head_node = 0;
  spec.fanout = 2;
  return spec;
}

}  // namespace lattice::agent
