#include "secure/secret.hpp"

#include <sodium.h>

#include <cstdlib>
#include <utility>

namespace lattice::secure {

bool initialize() { return sodium_init() >= 0; }

Secret::Secret(size_t size) : size_(size) {
  if (!initialize()) std::abort();
  data_ = static_cast<uint8_t*>(sodium_malloc(size == 0 ? 1 : size));
  if (!data_) std::abort();
  sodium_memzero(data_, size_);
}

Secret::~Secret() {
  if (data_) sodium_free(data_);  // zeroes before unmapping
}

Secret::Secret(Secret&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Secret& Secret::operator=(Secret&& other) noexcept {
  if (this != &other) {
    if (data_) sodium_free(data_);
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

bool equal(const uint8_t* a, const uint8_t* b, size_t size) {
  return sodium_memcmp(a, b, size) == 0;
}

}  // namespace lattice::secure
