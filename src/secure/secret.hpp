// Secret bytes in libsodium's guarded memory: locked (kept out of swap), excluded from core
// dumps, fenced by guard pages and wiped when freed. Every key the project holds lives in one.
// Small secrets share pooled guarded arenas (cheap); larger ones cost a sodium_malloc each
// (~16 KiB of address space): allocate per key or per connection, never per message.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lattice::secure {

// Calls sodium_init() once; false when libsodium cannot initialise (no usable RNG). Every
// constructor below calls it, so mains need it only to fail early with a clear message.
bool initialize();

class Secret {
 public:
  // `size` zeroed bytes. Aborts when guarded memory cannot be had: a key in ordinary memory
  // would be a silent downgrade.
  explicit Secret(size_t size);
  ~Secret();
  Secret(Secret&& other) noexcept;
  Secret& operator=(Secret&& other) noexcept;
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Overwrites the bytes with zeros (the memory stays allocated).
  void wipe();

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Fills `out` with bytes from the kernel's CSPRNG (tokens, ids).
void random_bytes(void* out, size_t size);

// Overwrites ordinary memory that held a secret for a moment (a copy the compiler may not drop).
void wipe(void* data, size_t size);

// Constant-time comparison of equal-length buffers.
bool equal(const uint8_t* a, const uint8_t* b, size_t size);

}  // namespace lattice::secure
