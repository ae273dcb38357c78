// libFuzzer target: the ELF reader (proc/elf_dynamic.hpp) the agent runs over the programs of
// --pmi auto launches and the libraries they name: files the job's user wrote. Any bytes must
// give an error or a bounded result, never a read outside them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proc/elf_dynamic.hpp"
#include "proc/program_mpi.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice::proc;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto got = read_elf_dynamic(BytesSource(bytes));
  if (!got) return 0;
  if (got->needed.size() > kElfMaxNeeded) std::abort();
  if (!got->dynamic && !got->needed.empty()) std::abort();
  for (const auto& name : got->needed) {
    if (name.size() >= kElfMaxString || name.find('\0') != std::string::npos) std::abort();
    mpi_of_library(name);
  }
  if (got->runpath.size() >= kElfMaxString || got->rpath.size() >= kElfMaxString) std::abort();
  return 0;
}
