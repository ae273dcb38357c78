// Process signals on the loop (SIGTERM, SIGINT, SIGHUP for the daemon and the launcher), and the
// process-wide SIGPIPE setting every main() needs. A SignalWatcher stops when destroyed.
#pragma once

#include <functional>
#include <memory>

#include "net/loop.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

class SignalWatcher {
 public:
  // Started here. Aborts if libuv refuses the signal number (a programming error).
  SignalWatcher(Loop& loop, int signum, std::function<void(int signum)> fn);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::unique_ptr<Handle<uv_signal_s>> handle_;
  std::function<void(int)> fn_;
};

// A uv_write to a vanished peer must be an EPIPE error, not a silent exit 141
// (docs/building.md §4). Call once from main, before anything writes. Children get default
// dispositions back (libuv).
void ignore_sigpipe();

}  // namespace lattice::net
