#include "secure/secret_pool.hpp"

#include <sodium.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace lattice::secure::detail {
namespace {

// 8 KiB per arena: two pages of slots between libsodium's guard pages.
constexpr size_t kSlotsPerArena = 64;
constexpr size_t kArenaBytes = kSlotsPerArena * kSlotBytes;

struct Arena {
  uint8_t* base = nullptr;
  std::vector<uint8_t*> free;  // slots not in use
};

struct Pool {
  std::mutex mutex;
  std::vector<Arena> arenas;
};

Pool& pool() {
  static Pool instance;  // the allocator's own state, like malloc's; never destroyed early
  return instance;
}

}  // namespace

uint8_t* acquire_slot() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (Arena& a : p.arenas) {
    if (a.free.empty()) continue;
    uint8_t* slot = a.free.back();
    a.free.pop_back();
    return slot;
  }
  if (sodium_init() < 0) std::abort();
  Arena a;
  a.base = static_cast<uint8_t*>(sodium_malloc(kArenaBytes));
  if (!a.base) std::abort();
  sodium_memzero(a.base, kArenaBytes);
  for (size_t i = kSlotsPerArena; i-- > 1;) a.free.push_back(a.base + i * kSlotBytes);
  p.arenas.push_back(std::move(a));
  return p.arenas.back().base;
}

void release_slot(uint8_t* slot) {
  sodium_memzero(slot, kSlotBytes);
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (size_t i = 0; i < p.arenas.size(); ++i) {
    Arena& a = p.arenas[i];
    if (slot < a.base || slot >= a.base + kArenaBytes) continue;
    a.free.push_back(slot);
    // Keep one arena for the next connection; give back any other that is empty.
    if (a.free.size() == kSlotsPerArena && p.arenas.size() > 1) {
      sodium_free(a.base);
      p.arenas.erase(p.arenas.begin() + static_cast<long>(i));
    }
    return;
  }
  std::abort();  // not one of ours: a bug that must not pass silently
}

}  // namespace lattice::secure::detail
