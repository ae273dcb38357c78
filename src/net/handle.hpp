// The one place libuv handle lifetimes are handled: a uv handle lives in heap memory that is
// freed only in libuv's close callback, while its C++ owner may go away at any time. The owner
// calls close() (its destructor does); callbacks that fire after that never reach the owner,
// because the handle's `data` is cleared first.
#pragma once

#include <uv.h>

#include <cstdlib>
#include <string>

namespace lattice::net {

template <class UvHandle>
class Handle {
 public:
  Handle() : h_(static_cast<UvHandle*>(std::calloc(1, sizeof(UvHandle)))) {
    if (!h_) std::abort();
  }
  ~Handle() { close(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  UvHandle* get() const { return h_; }
  uv_handle_t* base() const { return reinterpret_cast<uv_handle_t*>(h_); }
  // Marks the handle initialised (uv_*_init succeeded): only then does it need uv_close.
  void initialised(void* owner) {
    live_ = true;
    base()->data = owner;
  }
  void close() {
    if (!h_) return;
    if (live_) {
      base()->data = nullptr;
      if (!uv_is_closing(base())) uv_close(base(), [](uv_handle_t* h) { std::free(h); });
    } else {
      std::free(h_);
    }
    h_ = nullptr;
    live_ = false;
  }

 private:
  UvHandle* h_;
  bool live_ = false;
};

// The owner behind a handle's callback, or null when the owner has closed it.
template <class Owner, class UvHandle>
Owner* owner_of(UvHandle* h) {
  return static_cast<Owner*>(h->data);
}

std::string uv_error(int code);

}  // namespace lattice::net
