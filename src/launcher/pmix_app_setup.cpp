#include "launcher/pmix_app_setup.hpp"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "pmix/app_setup.hpp"

namespace lattice::launcher {

Result<std::string> pmix_app_setup(const std::string& launch_id, uint32_t uid,
                                   const std::string& exports) {
  // libpmix forwards settings of this environment, of which --export NONE says none travels.
  if (exports == "NONE") return std::string();
  // The server's rendezvous files, in a directory of this call's own.
  const char* base = std::getenv("TMPDIR");
  std::string dir = cat(base && *base ? base : "/tmp", "/lattice-pmix-setup-XXXXXX");
  if (!::mkdtemp(dir.data()))
    return make_error(cat("a directory for libpmix in ", dir, ": ", std::strerror(errno)));
  auto start = std::chrono::steady_clock::now();
  pmix::AppSetupAsk ask{cat("lattice.", launch_id), uid, dir};
  auto answer = pmix::setup_application(ask);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (!answer) return answer.error();
  LAT_LOG(debug, "pmix", "PMIx_server_setup_application took ",
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                start)
              .count(),
          " ms");
  for (const auto& key : answer->left_out)
    LAT_LOG(warn, "pmix", "PMIx setup data under '", key, "' left out (Lattice carries ",
            pmix::kSetEnvarKey, " only)",
            log_fields({{"launch", std::string(launch_id)}, {"uid", cat(uid)}}));

  std::vector<pmix::SetupEntry> entries;
  for (auto& entry : answer->entries)
    if (entry.envars.size() == 1 && starts_with(entry.envars[0].name, pmix::kForwardedPrefix))
      entries.push_back(std::move(entry));
  if (entries.empty()) return std::string();
  return pmix::encode_app_setup(entries);
}

}  // namespace lattice::launcher
