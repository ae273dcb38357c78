// Readiness of a socket that someone else reads and writes (libcurl's, for the fabric client):
// uv_poll behind the handle template. The owner of the fd must close it only after stopping or
// destroying the watcher. Not movable (libuv holds a pointer back to it).
#pragma once

#include <functional>
#include <memory>

#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

class FdWatcher {
 public:
  struct Events {
    bool readable = false;
    bool writable = false;
    bool error = false;  // libuv reported an error on the fd (the owner's next I/O will see it)
  };
  static Result<std::unique_ptr<FdWatcher>> watch(Loop& loop, int fd);
  ~FdWatcher();
  FdWatcher(const FdWatcher&) = delete;
  FdWatcher& operator=(const FdWatcher&) = delete;

  // (Re)starts with these interests; the callback may stop or destroy this watcher.
  void start(bool readable, bool writable, std::function<void(Events)> fn);
  void stop();

 private:
  FdWatcher();
  std::unique_ptr<Handle<uv_poll_s>> handle_;
  std::function<void(Events)> fn_;
};

}  // namespace lattice::net
