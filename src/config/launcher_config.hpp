// The launcher's configuration file (lattice --config FILE; lattice(1) documents every key):
// where the fabric manager is and how to reach it, and the fence settings of its launches.
// Command-line flags win over the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "config/fence_defaults.hpp"

namespace lattice::config {

struct LauncherConfig {
  std::string fabric_url;         // http:// or https://; empty: no fabric manager
  std::string fabric_token_file;  // the bearer token (owner-only file)
  uint32_t vni = 0;               // the allocation's VNI; 0: none (no CXI unless --vni)
  uint32_t fabric_connect_timeout_ms = 2000;
  uint32_t fabric_timeout_ms = 5000;  // one request, the whole exchange
  uint32_t fabric_attempts = 4;       // per request, the first included
  // Every launch names these to all its agents (--fanout, --fence-timeout win).
  uint32_t fence_fanout = kDefaultFanout;
  uint32_t fence_timeout_ms = kDefaultFenceTimeoutMs;
};

// Slingshot VNIs are 16-bit; 0 means "none" here.
inline constexpr uint32_t kMaxVni = 65535;

Result<LauncherConfig> parse_launcher_config(std::string_view yaml_text, const std::string& source);
Result<LauncherConfig> load_launcher_config(const std::string& path);

}  // namespace lattice::config
