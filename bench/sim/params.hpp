// The model's parameters as a table: name, field, unit and where the value comes from, so the
// command line (--NAME=VALUE) and the printed table are the same list.
#pragma once

#include <string>
#include <vector>

#include "model.hpp"

namespace lattice::sim {

struct Param {
  const char* name;
  double Model::*field;
  const char* unit;
  std::string source;
};

// Every Model field, with the sources of the defaults.
std::vector<Param> model_params();
// Sets the source of `name` (after calibration or a command-line override).
void set_source(std::vector<Param>& params, const std::string& name, std::string source);

}  // namespace lattice::sim
