#include "proc/program_mpi.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <set>
#include <utility>
#include <vector>

#include "base/strings.hpp"
#include "proc/elf_dynamic.hpp"

namespace lattice::proc {
namespace {

// Where the loader looks after the run paths and LD_LIBRARY_PATH (Debian's multiarch
// directories first, as its ld.so.cache lists them).
constexpr const char* kSystemDirs[] = {"/lib/x86_64-linux-gnu",
                                       "/usr/lib/x86_64-linux-gnu",
                                       "/lib/aarch64-linux-gnu",
                                       "/usr/lib/aarch64-linux-gnu",
                                       "/lib64",
                                       "/usr/lib64",
                                       "/lib",
                                       "/usr/lib",
                                       "/usr/local/lib"};

// The C runtime and the compilers' libraries link no MPI: not worth a read.
constexpr std::string_view kSystemLibraries[] = {
    "libc.so",  "libm.so",      "libdl.so",     "libpthread.so",  "librt.so",
    "ld-linux", "libstdc++.so", "libgcc_s.so",  "libgfortran.so", "libquadmath.so",
    "libz.so",  "libutil.so",   "libresolv.so", "linux-vdso.so"};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One open file, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  explicit operator bool() const { return fd_ >= 0; }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  size_t read(uint64_t offset, char* out, size_t n) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  }

 private:
  int fd_;
};

// A regular file opened for reading (never a FIFO or a device a name may point at).
Fd open_regular(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Fd();
  return fd;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A run path's directories, $ORIGIN being the directory of the object that names it.
void add_run_path(const std::string& paths, const std::string& origin,
                  std::vector<std::string>& dirs) {
  for (std::string dir : split(paths, ':')) {
    for (std::string_view token : {"${ORIGIN}", "$ORIGIN"})
      for (auto at = dir.find(token); at != std::string::npos; at = dir.find(token))
        dir.replace(at, token.size(), origin);
    if (!dir.empty()) dirs.push_back(std::move(dir));
  }
}

struct Evidence {
  std::string pmix;      // libpmix itself
  std::string open_mpi;  // Open MPI's libraries
  std::string pmi;       // MPICH's and PMI's
  bool decided() const { return !pmix.empty() || !open_mpi.empty(); }
};

std::string links(const std::string& name, const char* family) {
  return cat("links ", name, " (", family, ")");
}

}  // namespace

std::optional<LibraryMpi> mpi_of_library(std::string_view name) {
  // Open MPI 3 to 5 (libmpi.so.40 and its Fortran, C++ and Java companions, its runtime
  // libraries); MPICH's ABI is .so.12 (libmpi.so.12 for Intel MPI and MVAPICH, libmpich.so.12
  // for Debian's MPICH, libmpi_cray.so.12).
  constexpr std::string_view kOpenMpi[] = {"libopen-pal.so", "libopen-rte.so", "libprrte.so"};
  constexpr std::string_view kMpich[] = {"libmpich", "libmpi_cray.so", "libmpicxx.so",
                                         "libmpifort.so"};
  if (starts_with(name, "libpmix.so")) return LibraryMpi{MpiWireUp::pmix, "PMIx"};
  for (auto prefix : kOpenMpi)
    if (starts_with(name, prefix)) return LibraryMpi{MpiWireUp::pmix, "Open MPI"};
  for (auto prefix : kMpich)
    if (starts_with(name, prefix)) return LibraryMpi{MpiWireUp::pmi, "MPICH"};
  if (starts_with(name, "libpmi.so") || starts_with(name, "libpmi2.so"))
    return LibraryMpi{MpiWireUp::pmi, "PMI-1/PMI-2"};
  if (starts_with(name, "libmpi")) {
    auto so = name.find(".so.");
    if (so != std::string_view::npos) {
      std::string_view version = name.substr(so + 4);
      if (starts_with(version, "40") || starts_with(version, "20"))
        return LibraryMpi{MpiWireUp::pmix, "Open MPI"};
      if (starts_with(version, "12")) return LibraryMpi{MpiWireUp::pmi, "MPICH"};
    }
  }
  return std::nullopt;
}

ProgramMpi classify_program(const std::string& program, const std::string& library_path) {
  Fd fd = open_regular(program);
  if (!fd) return {MpiWireUp::unknown, "cannot be opened as a regular file"};
  FileSource source(fd.get());
  char start[4] = {};
  size_t got = source.read(0, start, sizeof start);
  if (got >= 2 && start[0] == '#' && start[1] == '!') return {MpiWireUp::unknown, "a script (#!)"};
  if (!looks_like_elf(std::string_view(start, got))) return {MpiWireUp::unknown, "not an ELF file"};
  auto top = read_elf_dynamic(source);
  if (!top)
    return {MpiWireUp::unknown, cat("an ELF file that cannot be read: ", top.error().message)};
  if (!top->dynamic) return {MpiWireUp::unknown, "statically linked"};

  // The program's RPATH (without a RUNPATH) holds for every library below it too.
  std::vector<std::string> inherited;
  if (top->runpath.empty()) add_run_path(top->rpath, dir_of(program), inherited);
  std::vector<std::string> ld_dirs;
  add_run_path(library_path, dir_of(program), ld_dirs);

  struct Pending {
    std::string name;
    std::vector<std::string> dirs;  // the naming object's own run path
  };
  std::deque<Pending> queue;
  std::set<std::string> seen;
  Evidence found;
  auto enqueue = [&](const ElfDynamic& object, const std::string& origin) {
    std::vector<std::string> dirs;
    add_run_path(object.runpath.empty() ? object.rpath : object.runpath, origin, dirs);
    for (const auto& name : object.needed) {
      if (!seen.insert(name).second) continue;
      if (auto mpi = mpi_of_library(name)) {
        std::string& slot = mpi->need == MpiWireUp::pmi               ? found.pmi
                            : std::string_view(mpi->family) == "PMIx" ? found.pmix
                                                                      : found.open_mpi;
        if (slot.empty()) slot = links(name, mpi->family);
      }
      bool system = false;
      for (auto prefix : kSystemLibraries) system = system || starts_with(name, prefix);
      if (!system) queue.push_back({name, dirs});
    }
  };
  enqueue(top.value(), dir_of(program));

  size_t read = 1;
  while (!queue.empty() && !found.decided() && read < kMaxLibrariesRead) {
    Pending next = std::move(queue.front());
    queue.pop_front();
    // Once MPICH is found, only its own libraries can still say more (one linking libpmix).
    if (!found.pmi.empty() && !mpi_of_library(next.name)) continue;
    std::vector<std::string> dirs = next.dirs;
    dirs.insert(dirs.end(), inherited.begin(), inherited.end());
    dirs.insert(dirs.end(), ld_dirs.begin(), ld_dirs.end());
    dirs.insert(dirs.end(), std::begin(kSystemDirs), std::end(kSystemDirs));
    for (const auto& dir : dirs) {
      std::string path =
          next.name.find('/') == std::string::npos ? cat(dir, '/', next.name) : next.name;
      Fd lib = open_regular(path);
      if (!lib) continue;
      ++read;
      auto dynamic = read_elf_dynamic(FileSource(lib.get()));
      if (dynamic) enqueue(dynamic.value(), dir_of(path));
      break;  // the first file of that name is the loader's, readable or not
    }
  }
  if (!found.pmix.empty()) return {MpiWireUp::pmix, found.pmix};
  if (!found.open_mpi.empty() && found.pmi.empty()) return {MpiWireUp::pmix, found.open_mpi};
  if (!found.open_mpi.empty())
    return {MpiWireUp::unknown, cat(found.open_mpi, " and ", found.pmi.substr(6))};
  if (!found.pmi.empty()) return {MpiWireUp::pmi, found.pmi};
  return {MpiWireUp::unknown, "links no MPI library"};
}

}  // namespace lattice::proc
