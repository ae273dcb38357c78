// Reaping for a child subreaper (proc/containment.hpp): processes this one never started (a
// rank's daemon, its parent gone) are reparented to it and, once dead, stay zombies unless it
// waits for them. On each SIGCHLD, every child that no Process owns is reaped if it has exited.
#pragma once

#include "net/loop.hpp"
#include "net/signal.hpp"

namespace lattice::net {

class OrphanReaper {
 public:
  explicit OrphanReaper(Loop& loop);

 private:
  SignalWatcher sigchld_;
};

}  // namespace lattice::net
