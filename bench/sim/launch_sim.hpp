// Launch fan-out, simulated: a star (the launcher sends every agent its request, when k >= agents
// or 0), or relayed as `lattice launch --launch tree` does: the launcher sends the head its
// request, and each agent forwards it to its children in the k-ary fence tree before spawning
// its ranks. With fresh links every hop first connects and runs the sealed handshake (as
// `lattice launch` does); warm links skip both.
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
  double encode_us = 10;  // every sender encodes one request per direct child
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
