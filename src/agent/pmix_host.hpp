// The agent's one PMIx server (pmix/server.hpp), started by the first `--pmi pmix` launch and
// kept for the agent's life: libpmix allows one per process, serving each launch as its own
// namespace. Its thread's events reach the loop through a net::Async. The server's private
// directory sits in the PMI socket directory, so a crashed agent's is removed at the next start.
// libpmix's listener is taken over as it starts: its clients go through the PMIx door
// (pmix_door.hpp) first, and without the door there is no PMIx.
#pragma once

#include <memory>
#include <string>

#include "agent/pmix_door.hpp"
#include "base/result.hpp"
#include "net/async.hpp"
#include "net/loop.hpp"
#include "pmix/server.hpp"

namespace lattice::agent {

class PmixHost {
 public:
  PmixHost(net::Loop& loop, std::string socket_dir, std::string hostname);
  ~PmixHost();
  PmixHost(const PmixHost&) = delete;
  PmixHost& operator=(const PmixHost&) = delete;

  // The running server, started on first use; an error says why PMIx cannot be served.
  Result<pmix::Server*> server();
  // Who may connect to it (valid once server() succeeded).
  PmixDoor& door() { return *door_; }

 private:
  net::Loop& loop_;
  net::Async wake_;
  std::string tmpdir_;
  std::string hostname_;
  std::unique_ptr<PmixDoor> door_;  // destroyed after the server: libpmix's thread is gone then
  std::unique_ptr<pmix::Server> server_;
};

}  // namespace lattice::agent
