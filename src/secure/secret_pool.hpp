// Guarded memory for small secrets (keys, stream states), in slots carved out of arenas that
// sodium_malloc made. sodium_malloc costs an mmap, mprotects and an mlock per call (~11 µs, and
// TLB shootdowns in a VM); a handshake allocates six small secrets per side, which made sealing
// cost a third of a 64-agent fan-out. Arenas keep libsodium's guard pages, locking and
// exclusion from core dumps; slots are wiped when released. Internal to secure/.
// Caveat: process-wide, like malloc's heap; a mutex makes it safe if a thread ever uses it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lattice::secure::detail {

constexpr size_t kSlotBytes = 128;

// A zeroed slot of kSlotBytes; aborts when no guarded memory can be had.
uint8_t* acquire_slot();
// Wipes the slot and returns it (an arena left empty goes back to the system).
void release_slot(uint8_t* slot);

}  // namespace lattice::secure::detail
