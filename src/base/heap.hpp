// How the process's heap behaves under a steady stream of large buffers (64 KiB reads, sealed
// records, output and stdin chunks): glibc by default gives the top of the heap back after every
// burst and maps buffers of 128 KiB or more afresh, so each chunk faults in freshly zeroed pages.
#pragma once

namespace lattice {

// Keeps up to a few MiB of freed memory for reuse instead (call once, early in main). An agent
// still returns it when it is quiet (malloc_trim), so its resting size does not grow.
void keep_freed_memory_for_reuse();

}  // namespace lattice
