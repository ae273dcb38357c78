// Launch fan-out, simulated: the launcher hands a LaunchProcesses request to its children in a
// k-ary tree over {launcher, agents} (a star when k >= agents, as today), each agent forwards
// the request it received to its own children before spawning its ranks. With fresh links
// every hop first connects and runs the sealed handshake (as today); warm links skip both.
// Time 0 is the launcher starting; the end is the last agent done spawning.
#pragma once

#include <cstdint>

#include "model.hpp"

namespace lattice::sim {

struct LaunchSetup {
  int agents = 1;
  int fanout = 0;  // children per node; >= agents (or 0): a star
  int ranks_per_node = 1;
  bool warm_links = false;
  // One agent's request, as calibrate.cpp measures it with the real codecs.
  double request_bytes = 1000;
  double encode_us = 10;  // the launcher encodes one request per direct child (per node today)
  double decode_us = 10;  // each agent decodes and checks the request it receives
};

struct LaunchResult {
  double time_us = 0;          // launcher start -> every agent has spawned its ranks
  int last_agent = -1;         // 1-based node of the tree (0 is the launcher)
  double launcher_cpu_us = 0;  // launcher busy time (its own work only)
  int depth = 0;
  uint64_t messages = 0;
  double bytes = 0;
};

LaunchResult simulate_launch(const Model& model, const LaunchSetup& setup);

}  // namespace lattice::sim
