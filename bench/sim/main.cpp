// lattice-bench-sim: predicted fence and launch fan-out times for 1,024 to 16,384 nodes, from
// the real fence engine and the real launch codecs driven over a modeled cluster network
// (issue 11 part 6). Markdown on stdout; `--help` lists the options.
#include <cstdio>
#include <exception>
#include <vector>

#include "options.hpp"
#include "params.hpp"
#include "tables.hpp"

int main(int argc, char** argv) {
  using namespace lattice::sim;
  try {
    Model model;
    std::vector<Param> params = model_params();
    const Options o = parse_options(argc, argv, model, params);
    print_params(model, params, o);
    print_fence(model, o);
    print_launch(model, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lattice-bench-sim: %s\n", e.what());
    return 1;
  }
  return 0;
}
