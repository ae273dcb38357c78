// The PMIx door: who reaches the agent's libpmix. Every connection to libpmix's listener comes
// here first (net/accept_handoff.hpp): the kernel names the user whose socket it is (sock_diag),
// a user with no PMIx launch on this node is turned away at once, and of the others the
// handshake is read (peeked, so libpmix still reads it) within a deadline and judged
// (pmix/admission.hpp): only a rank of a registered namespace, connecting as its own user (or
// root), with a handshake libpmix will take as it stands, is handed on. Refusals are logged
// with the real uid; the victim's launch never sees them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "base/log_limiter.hpp"
#include "net/accept_handoff.hpp"
#include "net/fd.hpp"
#include "net/fd_watcher.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "pmix/admission.hpp"

namespace lattice::agent {

class PmixDoor {
 public:
  PmixDoor(net::Loop& loop, std::unique_ptr<net::AcceptHandoff> handoff);
  ~PmixDoor();
  PmixDoor(const PmixDoor&) = delete;
  PmixDoor& operator=(const PmixDoor&) = delete;

  // The launch's namespace, as registered with libpmix, may now be connected to; forget()
  // closes it again.
  void allow(const std::string& nspace, pmix::RegisteredNamespace job);
  void forget(const std::string& nspace);
  // New connections wait (called on the loop when the hand-off says so).
  void arrived();

 private:
  struct Pending;
  void watch(net::UniqueFd fd);
  void read_hello(uint64_t id);
  // `cause`: a fixed word, for the log's rate limit (never the client's bytes).
  void refuse(uint64_t id, std::string_view cause, const std::string& why);
  void admit(uint64_t id);

  net::Loop& loop_;
  std::unique_ptr<net::AcceptHandoff> handoff_;
  pmix::Registry registry_;
  LogLimiter refusals_;  // one line a second per cause
  std::map<uint64_t, std::unique_ptr<Pending>> pending_;
  uint64_t next_id_ = 1;
};

}  // namespace lattice::agent
