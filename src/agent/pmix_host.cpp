#include "agent/pmix_host.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

PmixHost::PmixHost(net::Loop& loop, std::string socket_dir, std::string hostname)
    : loop_(loop),
      wake_(loop,
            [this] {
              if (server_) server_->drain();
              if (door_) door_->arrived();
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
  auto before = net::listening_tcp_fds();
  auto started = pmix::Server::start({tmpdir_, hostname_}, [this] { wake_.send(); });
  if (!started) {
    ::rmdir(tmpdir_.c_str());
    return started.error();
  }
  server_ = std::move(started.value());
  // Its listener, taken over before any namespace exists: no client has reached it yet.
  std::vector<int> made;
  for (int fd : net::listening_tcp_fds())
    if (std::find(before.begin(), before.end(), fd) == before.end()) made.push_back(fd);
  auto handoff =
      made.size() == 1
          ? net::AcceptHandoff::install(made[0], [this] { wake_.send(); })
          : Result<std::unique_ptr<net::AcceptHandoff>>(make_error(
                cat("libpmix opened ", made.size(), " listening sockets (one was expected)")));
  if (!handoff) {
    server_.reset();
    remove_launch_dir(tmpdir_);
    return make_error(
        cat("PMIx is not served: its clients could not be vetted: ", handoff.error().message));
  }
  LAT_LOG(info, "pmix", "PMIx server started (", tmpdir_,
          "), clients vetted on 127.0.0.1:", handoff.value()->port());
  door_ = std::make_unique<PmixDoor>(loop_, std::move(handoff.value()));
  return server_.get();
}

}  // namespace lattice::agent
