// lattice-bench-sim's output: markdown tables like bench/bench.py's, the model's parameters
// first, then the predicted fence and launch fan-out times beside the design's budgets, and
// one line per verdict (goals at 4,096 nodes, where a tree starts beating the star).
#pragma once

#include <vector>

#include "model.hpp"
#include "options.hpp"
#include "params.hpp"

namespace lattice::sim {

void print_params(const Model& model, const std::vector<Param>& params, const Options& o);
void print_fence(const Model& model, const Options& o);
void print_launch(const Model& model, const Options& o);

}  // namespace lattice::sim
