// lattice-agentd's command line -> AgentFlags. Pure: the flags that override the config file
// are kept as they were given and applied to it at start and on every SIGHUP (main).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace lattice::agent {

struct AgentFlags {
  std::string config_path;
  std::vector<std::pair<std::string, std::string>> overrides;  // flag -> value, as given
  int ready_fd = -1;
  bool check_config = false;
  std::string generate_key;  // --generate-key FILE: write a key, nothing else
  // The operators' certificate authority (docs/security.md, "Node identities"), each alone:
  std::string generate_ca;  // --generate-ca FILE: a new authority, FILE and FILE.pub
  std::string certify;      // --certify ROLE:NAME --ca FILE --out FILE [--days N]
  std::string ca_file;
  std::string out_file;
  int64_t days = 365;
  bool help = false;
  bool version = false;
};

// argv after the program's name. Errors are one line; an unknown flag names the nearest.
Result<AgentFlags> parse_agent_flags(const std::vector<std::string>& args);

extern const char* const kAgentUsage;

}  // namespace lattice::agent
