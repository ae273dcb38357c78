// `lattice alloc` command line -> AllocOptions: salloc/sbatch's shape for starting an
// allocation on a set of agents and running its batch step. Pure, so every flag and error is
// unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

struct AllocOptions {
  std::vector<LaunchOptions::Agent> agents;  // --agents; empty: local mode (-N agents started)
  int nodes = 0;               // -N: local mode, the agents started (1 when 0); else the first N
  std::string user;            // --user NAME|UID; empty: the invoking user
  uint64_t time_limit_ms = 0;  // -t/--time (srun's formats); 0: none
  std::string key_file;        // --key-file; empty: $LATTICE_KEY_FILE
  std::string id;              // --id; empty: a new UUID
  uint32_t cpus = 0;           // --cpus-per-node; 0: all the agent may use
  uint64_t memory_bytes = 0;   // --mem (per node, salloc's units); 0: no limit
  bool slurm_compat = false;
  bool verbose = false;
  // CXI, as `lattice launch` takes it: one service for the allocation's life.
  uint32_t vni = 0;
  std::string fabric_url, fabric_token_file, config_file;
  std::vector<std::string> command;  // the batch step: CMD [ARGS...]
  bool help = false;                 // -h/--help: print kAllocUsage, nothing else
};

// salloc's --mem: a number with an optional K, M (the default), G or T suffix -> bytes (more
// than 0). Errors name `flag`.
Result<uint64_t> parse_memory(const std::string& text, std::string_view flag = "--mem");

// argv after "alloc". Errors are one line; an unknown option names the nearest known one.
Result<AllocOptions> parse_alloc_options(const std::vector<std::string>& argv);

extern const char* const kAllocUsage;

}  // namespace lattice::launcher
