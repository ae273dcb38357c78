// Secret: small secrets come from the slot pool (secret_pool.hpp), larger ones straight from
// sodium_malloc; both are guarded memory and both are wiped when released.
#include "secure/secret.hpp"

#include <sodium.h>

#include <cstdlib>
#include <utility>

#include "secure/secret_pool.hpp"

namespace lattice::secure {

bool initialize() { return sodium_init() >= 0; }

namespace {

void release(uint8_t* data, size_t size) {
  if (!data) return;
  if (size <= detail::kSlotBytes)
    detail::release_slot(data);
  else
    sodium_free(data);  // zeroes before unmapping
}

}  // namespace

Secret::Secret(size_t size) : size_(size) {
  if (!initialize()) std::abort();
  if (size <= detail::kSlotBytes) {
    data_ = detail::acquire_slot();
    return;
  }
  data_ = static_cast<uint8_t*>(sodium_malloc(size));
  if (!data_) std::abort();
  sodium_memzero(data_, size_);
}

Secret::~Secret() { release(data_, size_); }

Secret::Secret(Secret&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    release(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void Secret::wipe() {
  if (data_) sodium_memzero(data_, size_);
}

void random_bytes(void* out, size_t size) {
  if (!initialize()) std::abort();
  randombytes_buf(out, size);
}

void wipe(void* data, size_t size) { sodium_memzero(data, size); }

bool equal(const uint8_t* a, const uint8_t* b, size_t size) {
  return sodium_memcmp(a, b, size) == 0;
}

}  // namespace lattice::secure
