// Async over uv_async_t, through the handle template like every other handle.
#include "net/async.hpp"

#include <uv.h>

#include <cstdlib>

#include "net/detail/handle.hpp"

namespace lattice::net {

Async::Async(Loop& loop, std::function<void()> fn)
    : handle_(std::make_unique<Handle<uv_async_t>>()), fn_(std::move(fn)) {
  int rc = uv_async_init(loop.raw(), handle_->get(), [](uv_async_t* a) {
    auto* self = owner_of<Async>(a);
    if (!self) return;
    auto callback = self->fn_;
    guarded("async", callback);
  });
  if (rc != 0) std::abort();  // only on a broken loop
  handle_->initialised(this);
  uv_unref(handle_->base());
}

Async::~Async() = default;

void Async::send() { uv_async_send(handle_->get()); }

}  // namespace lattice::net
