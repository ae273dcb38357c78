// What an ELF file asks of the dynamic loader (DT_NEEDED, DT_RUNPATH, DT_RPATH), read from its
// program headers and dynamic segment alone. A pure, bounded reader: every offset and count
// comes from an untrusted file and is checked before use, and it reads only the few hundred
// bytes it needs through a ByteSource (a file, or bytes in memory for tests and the fuzzer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

// Random access to the file's bytes: copies up to `n` bytes at `offset` into `out` and returns
// how many it copied (fewer at the end of the file).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(uint64_t offset, char* out, size_t n) const = 0;
};

class BytesSource final : public ByteSource {
 public:
  explicit BytesSource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(uint64_t offset, char* out, size_t n) const override;

 private:
  std::string_view bytes_;
};

struct ElfDynamic {
  bool dynamic = false;             // it has a dynamic segment (false: statically linked)
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string runpath;              // DT_RUNPATH, else empty
  std::string rpath;                // DT_RPATH, else empty
};

// Bounds on what one file may make the reader do.
inline constexpr uint32_t kElfMaxProgramHeaders = 512;
inline constexpr uint32_t kElfMaxDynamicEntries = 4096;
inline constexpr size_t kElfMaxNeeded = 256;
inline constexpr size_t kElfMaxString = 4096;

// Whether the file starts like an ELF file at all (its first 4 bytes).
bool looks_like_elf(std::string_view first_bytes);

// Reads an ELF32 or ELF64 file of either byte order. An error says what is wrong with it.
Result<ElfDynamic> read_elf_dynamic(const ByteSource& file);

}  // namespace lattice::proc
