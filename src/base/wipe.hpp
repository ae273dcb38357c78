// Zeroing ordinary memory that held secret bytes (a plaintext frame carrying a CXI key, a
// parser's copy, a rank's environment block) in a way the compiler may not drop. Every layer
// that touches such bytes uses this one; keys themselves live in secure::Secret.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lattice {

void wipe_bytes(void* data, size_t size);
// The string keeps its size, now all zeros.
void wipe(std::string& bytes);
void wipe(std::vector<std::string>& strings);

}  // namespace lattice
