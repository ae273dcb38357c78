// lattice-bench-sim's command line: sizes, the fence's workload, the method, and any Model
// field as --NAME=VALUE (applied after the calibration, so it wins over a measurement).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fence/chunk.hpp"
#include "model.hpp"
#include "params.hpp"

namespace lattice::sim {

struct Options {
  std::vector<int> sizes{1024, 2048, 4096, 8192, 16384};
  int ranks_per_node = 1;
  size_t value_bytes = 64;
  size_t chunk_bytes = fence::kDefaultChunkBytes;
  std::string method = "auto";  // full, hollow, or auto: full while every node's store fits
  bool calibrate = true;
  // The calibrated per-key cost of a leaf's whole receive path in isolation (0 when not
  // calibrated): what a node with cores of its own pays, beside key_recv_us's contended figure.
  double isolated_key_us = 0;
};

// Parses argv, calibrates `model` against the real code (unless --no-calibrate) and applies the
// overrides, keeping `params`' sources up to date. Exits with a usage message on a bad option.
Options parse_options(int argc, char** argv, Model& model, std::vector<Param>& params);

}  // namespace lattice::sim
