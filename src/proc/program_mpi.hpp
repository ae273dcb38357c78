// Which wire-up a program's MPI needs, judged from the libraries it links (elf_dynamic.hpp):
// Open MPI and anything linking libpmix need PMIx; MPICH and its ABI (Intel MPI, MVAPICH, Cray
// MPICH) and Slurm's libpmi/libpmi2 need PMI-1/PMI-2. A script, an interpreter that loads MPI
// itself (python3 with mpi4py) or a program linking no MPI cannot be told: `unknown`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lattice::proc {

enum class MpiWireUp { unknown, pmi, pmix };

struct ProgramMpi {
  MpiWireUp need = MpiWireUp::unknown;
  std::string why;  // for people: "links libmpi.so.40 (Open MPI)", "a script (#!)", ...
};

// What a library's name (its DT_NEEDED entry) says, if it is an MPI's or a PMI's.
struct LibraryMpi {
  MpiWireUp need = MpiWireUp::unknown;
  const char* family = "";  // "Open MPI", "MPICH", "PMIx", "PMI-1/PMI-2"
};
std::optional<LibraryMpi> mpi_of_library(std::string_view name);

// At most this many files are opened for one program (it and the libraries it needs).
inline constexpr size_t kMaxLibrariesRead = 48;

// Reads `program` and, breadth first, the libraries it needs, looked up as the loader would
// (its run paths with $ORIGIN, `library_path` as LD_LIBRARY_PATH, the system's directories);
// never fails: what cannot be read is `unknown`, and says why.
ProgramMpi classify_program(const std::string& program, const std::string& library_path);

}  // namespace lattice::proc
