#include "agent/pmix_host.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

PmixHost::PmixHost(net::Loop& loop, std::string socket_dir, std::string hostname)
    : wake_(loop,
            [this] {
              if (server_) server_->drain();
            }),
      tmpdir_(cat(socket_dir, '/', kPmixServerDirName)),
      hostname_(std::move(hostname)) {}

PmixHost::~PmixHost() {
  if (!server_) return;
  server_.reset();  // finalizes libpmix
  remove_launch_dir(tmpdir_);
}

Result<pmix::Server*> PmixHost::server() {
  if (server_) return server_.get();
  // Ranks reach the server over loopback TCP (the URI in their environment), not through this
  // directory: it stays the agent's own.
  if (::mkdir(tmpdir_.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(cat("cannot create ", tmpdir_, ": ", std::strerror(errno)));
  auto started = pmix::Server::start({tmpdir_, hostname_}, [this] { wake_.send(); });
  if (!started) {
    ::rmdir(tmpdir_.c_str());
    return started.error();
  }
  server_ = std::move(started.value());
  LAT_LOG(info, "pmix", "PMIx server started (", tmpdir_, ")");
  return server_.get();
}

}  // namespace lattice::agent
