// RFC0029's setup data as it travels in a launch request (AppSetup.vendor): what the launcher's
// PMIx_server_setup_application returned, taken apart into what each entry sets in the ranks'
// environment, so that an agent judges every variable before libpmix sees any of it, and libpmix
// on the agent unpacks only what the agent packed itself (app_setup.hpp). Layout, big-endian:
//   "LPS1", u32 entries, per entry: str key, u32 envars, per envar: str name, str value,
//   u8 separator; str: u32 length, bytes.
// Pure; decoding bounds everything before it keeps anything.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::pmix {

// Bounds on what an agent accepts: far above what libpmix returns (one entry of a few variables
// and a key), far below what could cost an agent memory.
inline constexpr size_t kMaxAppSetupBytes = 64 * 1024;
inline constexpr size_t kMaxAppSetupEntries = 16;
inline constexpr size_t kMaxAppSetupEnvars = 256;

struct SetupEnvar {
  std::string name;
  std::string value;
  char separator = ':';  // PMIx's, for prepending/appending; carried as libpmix gave it
  bool operator==(const SetupEnvar& o) const {
    return name == o.name && value == o.value && separator == o.separator;
  }
};

// One pmix_info_t of the setup data: its key and the variables its value sets.
struct SetupEntry {
  std::string key;
  std::vector<SetupEnvar> envars;
  bool operator==(const SetupEntry& o) const { return key == o.key && envars == o.envars; }
};

std::string encode_app_setup(const std::vector<SetupEntry>& entries);
// An error that says what is wrong: over the bounds, truncated, trailing bytes, a key or a name
// that is empty or holds what no key or variable name holds.
Result<std::vector<SetupEntry>> decode_app_setup(std::string_view bytes);

}  // namespace lattice::pmix
