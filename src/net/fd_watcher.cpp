// FdWatcher over uv_poll_t (socket flavour), through the handle template.
#include "net/fd_watcher.hpp"

#include <uv.h>

#include "net/detail/handle.hpp"

namespace lattice::net {

FdWatcher::FdWatcher() : handle_(std::make_unique<Handle<uv_poll_t>>()) {}

FdWatcher::~FdWatcher() = default;

Result<std::unique_ptr<FdWatcher>> FdWatcher::watch(Loop& loop, int fd) {
  std::unique_ptr<FdWatcher> watcher(new FdWatcher());
  int rc = uv_poll_init_socket(loop.raw(), watcher->handle_->get(), fd);
  if (rc != 0) return make_error(cat("cannot watch fd ", fd, ": ", uv_strerror(rc)));
  watcher->handle_->initialised(watcher.get());
  return watcher;
}

void FdWatcher::start(bool readable, bool writable, std::function<void(Events)> fn) {
  fn_ = std::move(fn);
  int events = (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0);
  uv_poll_start(handle_->get(), events, [](uv_poll_t* p, int status, int got) {
    auto* self = owner_of<FdWatcher>(p);
    if (!self) return;
    Events e{(got & UV_READABLE) != 0, (got & UV_WRITABLE) != 0, status < 0};
    auto callback = self->fn_;
    guarded("fd watcher", [&] { callback(e); });
  });
}

void FdWatcher::stop() { uv_poll_stop(handle_->get()); }

}  // namespace lattice::net
