// What systemd hears from the agent (sd_notify(3), libsystemd): READY=1 once it listens, with a
// STATUS line; STOPPING=1 when a signal ends it; WATCHDOG=1 from a timer on the agent's own
// loop at half the unit's WatchdogSec, so an agent whose loop is stuck is restarted. Without a
// service manager (NOTIFY_SOCKET unset) every call does nothing, and the agent runs as ever.
#pragma once

#include <string>

#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class ServiceManager {
 public:
  explicit ServiceManager(net::Loop& loop) : watchdog_(loop) {}

  // The agent serves: READY=1 and `status`; the watchdog starts if the unit asks for one.
  void ready(const std::string& status);
  // The agent is ending its launches and then itself.
  void stopping(const std::string& status);

 private:
  net::Timer watchdog_;
};

}  // namespace lattice::agent
