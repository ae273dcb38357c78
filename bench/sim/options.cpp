// Command-line parsing and calibration order for lattice-bench-sim (see options.hpp).
#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "calibrate.hpp"

namespace lattice::sim {
namespace {

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: lattice-bench-sim [--quick] [--sizes N,N,...] [--ranks-per-node R]\n"
               "         [--value-bytes B] [--chunk-bytes B] [--method auto|full|hollow]\n"
               "         [--no-calibrate] [--PARAM=VALUE ...]\n"
               "PARAM is any row of the printed parameter table, e.g. --latency_us=2 "
               "--bandwidth_bytes_per_us=12500\n");
  std::exit(status);
}

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> out;
  for (size_t pos = 0; pos <= text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(std::stoi(text.substr(pos, comma - pos)));
    if (out.back() < 2) usage(2);
    pos = comma + 1;
  }
  return out;
}

void calibrate_model(Options& o, Model& model, std::vector<Param>& params) {
  if (!o.calibrate) {
    for (auto& p : params)
      if (p.source.rfind("measured now", 0) == 0) p.source = "default (--no-calibrate)";
    return;
  }
  std::fprintf(stderr, "lattice-bench-sim: calibrating against the real code...\n");
  const Calibration c = calibrate(o.value_bytes);
  apply(c, model);
  o.isolated_key_us = c.key_path_us;
  char path[160];
  std::snprintf(path, sizeof path,
                "; a leaf's whole receive path in isolation (decode, fence::Reducer, "
                "pmi::Kvs::publish) is %.3f µs",
                c.key_path_us);
  for (auto& p : params)
    if (std::string(p.name) == "key_recv_us") p.source += path;
}

}  // namespace

Options parse_options(int argc, char** argv, Model& model, std::vector<Param>& params) {
  Options o;
  std::vector<std::pair<std::string, std::string>> overrides;  // after the calibration
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i], value;
      if (arg == "--help" || arg == "-h") usage(0);
      if (arg == "--quick") {
        o.sizes = {1024, 4096};
        continue;
      }
      if (arg == "--no-calibrate") {
        o.calibrate = false;
        continue;
      }
      if (arg.rfind("--", 0) != 0) usage(2);
      if (auto eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg.resize(eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        usage(2);
      }
      const std::string name = arg.substr(2);
      if (name == "sizes")
        o.sizes = parse_sizes(value);
      else if (name == "ranks-per-node")
        o.ranks_per_node = std::stoi(value);
      else if (name == "value-bytes")
        o.value_bytes = std::stoul(value);
      else if (name == "chunk-bytes")
        o.chunk_bytes = std::stoul(value);
      else if (name == "method")
        o.method = value;
      else
        overrides.emplace_back(name, value);
    }
    if (o.method != "auto" && o.method != "full" && o.method != "hollow") usage(2);
    if (o.ranks_per_node < 1 || o.chunk_bytes < 1) usage(2);
    calibrate_model(o, model, params);
    for (const auto& [name, value] : overrides) {
      bool known = false;
      for (auto& p : params)
        if (name == p.name) {
          model.*p.field = std::stod(value);
          p.source = "command line";
          known = true;
        }
      if (!known) usage(2);
    }
  } catch (const std::logic_error&) {  // stoi/stod on a malformed number
    usage(2);
  }
  return o;
}

}  // namespace lattice::sim
