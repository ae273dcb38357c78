// The one place libuv handle lifetimes are handled: a uv handle lives in heap memory that is
// freed only in libuv's close callback, while its C++ owner may go away at any time. The owner's
// destructor closes it after clearing `data`, so callbacks that fire later never reach the owner.
// Caveat: every handle on a net::Loop must come from Handle (the Loop frees leftovers with free()).
// Private to net/: only its .cpp files include this (and so <uv.h>); public headers hold a Handle
// through the declarations in net/uv_fwd.hpp.
#pragma once

#include <uv.h>

#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "base/log.hpp"

namespace lattice::net {

// uv_close with the callback that frees Handle's calloc'd memory.
void close_and_free(uv_handle_t* handle);

template <class UvHandle>
class Handle {
 public:
  Handle() : h_(static_cast<UvHandle*>(std::calloc(1, sizeof(UvHandle)))) {
    if (!h_) std::abort();  // out of memory for a few hundred bytes: nothing sane to do
  }
  ~Handle() { close(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  UvHandle* get() const { return h_; }
  uv_handle_t* base() const { return reinterpret_cast<uv_handle_t*>(h_); }
  uv_stream_t* stream() const { return reinterpret_cast<uv_stream_t*>(h_); }
  bool live() const { return live_; }

  // Marks the handle initialised (uv_*_init succeeded): only then does it need uv_close.
  void initialised(void* owner) {
    live_ = true;
    set_owner(owner);
  }
  void set_owner(void* owner) { base()->data = owner; }

  // Idempotent. Pending requests complete with UV_ECANCELED and find no owner.
  void close() {
    if (!h_) return;
    if (live_) {
      base()->data = nullptr;
      if (!uv_is_closing(base())) close_and_free(base());
    } else {
      std::free(h_);
    }
    h_ = nullptr;
    live_ = false;
  }

  // Hands a live handle over to libuv without closing it: no owner, unreferenced (it does not
  // keep the loop running). Whoever next sees the null owner in a callback must close_and_free
  // it; the Loop's destructor closes it otherwise.
  void abandon() {
    if (!h_) return;
    if (!live_) return close();
    base()->data = nullptr;
    uv_unref(base());
    h_ = nullptr;
    live_ = false;
  }

 private:
  UvHandle* h_;
  bool live_ = false;
};

// The owner behind a handle's callback, or null when the owner has closed it.
template <class Owner, class UvHandleOrReq>
Owner* owner_of(const UvHandleOrReq* h) {
  return static_cast<Owner*>(h->data);
}

// Streams hold what is written while a user callback runs and send it when the outermost one
// returns, one write per stream (stream.hpp); guarded() marks the callbacks (stream.cpp).
void hold_writes() noexcept;
void release_writes() noexcept;

// Runs a user callback at the edge of a libuv callback: nothing may unwind through libuv's C
// frames, so exceptions are logged and swallowed here.
template <class Fn, class... Args>
void guarded(const char* what, Fn&& fn, Args&&... args) noexcept {
  hold_writes();
  try {
    std::forward<Fn>(fn)(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    LAT_LOG(error, "net", what, " callback threw: ", e.what());
  } catch (...) {
    LAT_LOG(error, "net", what, " callback threw a non-standard exception");
  }
  release_writes();
}

std::string uv_error(int code);

}  // namespace lattice::net
