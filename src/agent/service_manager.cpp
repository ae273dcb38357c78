#include "agent/service_manager.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstring>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

namespace {

void notify(const std::string& state) {
  // 0: no manager to tell (NOTIFY_SOCKET unset); < 0: it could not be told, which costs the
  // unit its readiness or its watchdog, so it is said.
  if (int rc = sd_notify(0, state.c_str()); rc < 0)
    LAT_LOG(warn, "agent", "cannot notify the service manager: ", std::strerror(-rc));
}

}  // namespace

void ServiceManager::ready(const std::string& status) {
  notify(cat("READY=1\nSTATUS=", status));
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
  // Twice per period, as sd_watchdog_enabled(3) advises; a stuck loop misses both.
  const uint64_t every_ms = std::max<uint64_t>(usec / 2000, 1);
  LAT_LOG(info, "agent", "service manager watchdog: every ", every_ms, " ms");
  watchdog_.start(every_ms, every_ms, [] { notify("WATCHDOG=1"); });
}

void ServiceManager::stopping(const std::string& status) {
  notify(cat("STOPPING=1\nSTATUS=", status));
}

}  // namespace lattice::agent
