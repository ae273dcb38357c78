// The ELF reader and the MPI classifier: ELF files built here byte by byte (both word sizes and
// byte orders), every truncation and hostile offsets of them, and real programs of this host.
#include "proc/elf_dynamic.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "proc/program_mpi.hpp"

namespace lattice::proc {
namespace {

struct ElfSpec {
  bool is64 = true;
  bool little = true;
  std::vector<std::string> needed;
  std::string runpath;
  bool dynamic = true;
};

class Writer {
 public:
  Writer(bool little) : little_(little) {}
  void put(std::string& out, size_t at, uint64_t value, size_t n) const {
    if (out.size() < at + n) out.resize(at + n, '\0');
    for (size_t i = 0; i < n; ++i) {
      size_t shift = little_ ? i : n - 1 - i;
      out[at + i] = static_cast<char>((value >> (8 * shift)) & 0xff);
    }
  }

 private:
  bool little_;
};

// A minimal executable: header, a PT_LOAD over the whole file, a PT_DYNAMIC, the dynamic
// entries and their string table.
std::string make_elf(const ElfSpec& s) {
  Writer w(s.little);
  const size_t word = s.is64 ? 8 : 4, ehsize = s.is64 ? 64 : 52, phent = s.is64 ? 56 : 32;
  const uint64_t base = 0x400000;
  std::string strtab(1, '\0');
  std::vector<std::pair<uint64_t, uint64_t>> dyn;
  for (const auto& name : s.needed) {
    dyn.emplace_back(1, strtab.size());
    strtab += name + '\0';
  }
  if (!s.runpath.empty()) {
    dyn.emplace_back(29, strtab.size());
    strtab += s.runpath + '\0';
  }
  const size_t phoff = ehsize, dynoff = phoff + 2 * phent;
  const size_t strtab_off = dynoff + (dyn.size() + 3) * 2 * word;
  dyn.emplace_back(5, base + strtab_off);
  dyn.emplace_back(10, strtab.size());
  dyn.emplace_back(0, 0);
  const size_t total = strtab_off + strtab.size();

  std::string out(total, '\0');
  out[0] = 0x7f, out[1] = 'E', out[2] = 'L', out[3] = 'F';
  out[4] = s.is64 ? 2 : 1;
  out[5] = s.little ? 1 : 2;
  out[6] = 1;
  w.put(out, 16, 2, 2);  // ET_EXEC
  w.put(out, s.is64 ? 32 : 28, phoff, word);
  w.put(out, s.is64 ? 54 : 42, phent, 2);
  w.put(out, s.is64 ? 56 : 44, s.dynamic ? 2 : 1, 2);
  auto phdr = [&](size_t index, uint32_t type, uint64_t offset, uint64_t size) {
    size_t at = phoff + index * phent;
    w.put(out, at, type, 4);
    if (s.is64) {
      w.put(out, at + 8, offset, 8);
      w.put(out, at + 16, base + offset, 8);
      w.put(out, at + 32, size, 8);
    } else {
      w.put(out, at + 4, offset, 4);
      w.put(out, at + 8, base + offset, 4);
      w.put(out, at + 16, size, 4);
    }
  };
  phdr(0, 1, 0, total);
  phdr(1, 2, dynoff, dyn.size() * 2 * word);
  for (size_t i = 0; i < dyn.size(); ++i) {
    w.put(out, dynoff + i * 2 * word, dyn[i].first, word);
    w.put(out, dynoff + i * 2 * word + word, dyn[i].second, word);
  }
  out.replace(strtab_off, strtab.size(), strtab);
  return out;
}

Result<ElfDynamic> parse(const std::string& bytes) { return read_elf_dynamic(BytesSource(bytes)); }

TEST_CASE("elf: DT_NEEDED and DT_RUNPATH in every word size and byte order") {
  for (bool is64 : {true, false})
    for (bool little : {true, false}) {
      CAPTURE(is64);
      CAPTURE(little);
      auto got = parse(make_elf({is64, little, {"libmpi.so.40", "libc.so.6"}, "$ORIGIN/../lib"}));
      REQUIRE(got.ok());
      CHECK(got->dynamic);
      CHECK(got->needed == std::vector<std::string>{"libmpi.so.40", "libc.so.6"});
      CHECK(got->runpath == "$ORIGIN/../lib");
      CHECK(got->rpath.empty());
    }
  auto fixed = parse(make_elf({true, true, {}, "", false}));
  REQUIRE(fixed.ok());
  CHECK(!fixed->dynamic);
  CHECK(fixed->needed.empty());
}

TEST_CASE("elf: every truncation is an error or a result, never a read past the end") {
  const std::string whole = make_elf({true, true, {"libmpich.so.12", "libc.so.6"}, "/opt/x"});
  for (size_t n = 0; n < whole.size(); ++n) {
    auto got = parse(whole.substr(0, n));
    if (got.ok()) CHECK(got->needed.size() <= 2);
  }
  CHECK(!parse("").ok());
  CHECK(parse("\x7f"
              "ELF")
            .error()
            .message == "not an ELF file");  // too short for a header
  CHECK(!parse("#!/bin/sh\nexec mpi_hello\n").ok());
}

TEST_CASE("elf: hostile offsets and counts are refused") {
  const std::string good = make_elf({true, true, {"libmpi.so.40"}, ""});
  Writer w(true);
  auto with = [&](size_t at, uint64_t value, size_t n) {
    std::string bad = good;
    w.put(bad, at, value, n);
    return parse(bad);
  };
  CHECK(!with(32, UINT64_MAX - 8, 8).ok());  // e_phoff at the end of the address space
  CHECK(!with(32, 1ull << 40, 8).ok());      // far past the file
  CHECK(with(56, 0xffff, 2).error().message == "too many program headers (65535)");
  CHECK(!with(54, 8, 2).ok());       // program headers too small to hold one
  CHECK(!with(54, 0xffff, 2).ok());  // or absurdly large
  const size_t dyn_ph = 64 + 56;
  CHECK(!with(dyn_ph + 8, UINT64_MAX - 4, 8).ok());  // PT_DYNAMIC's offset wraps
  CHECK(!with(dyn_ph + 8, 1ull << 33, 8).ok());      // or lies beyond the file
  // A huge PT_DYNAMIC size is cut to the entry bound, and then lies beyond the file.
  CHECK(!with(dyn_ph + 32, UINT64_MAX, 8).ok());
  // DT_NEEDED's name index past DT_STRSZ; DT_STRTAB in no segment; DT_STRSZ huge with no NUL.
  const size_t dyn0 = 64 + 2 * 56;
  CHECK(!with(dyn0 + 8, 1u << 30, 8).ok());
  CHECK(parse([&] {
          std::string bad = good;
          w.put(bad, dyn0 + 16 + 8, 0x10, 8);  // DT_STRTAB at vaddr 0x10: below the PT_LOAD
          return bad;
        }())
            .error()
            .message == "the dynamic string table lies in no loaded segment");
  std::string unterminated = good;
  unterminated.pop_back();  // the last name's NUL
  CHECK(!parse(unterminated).ok());
  CHECK(!with(4, 3, 1).ok());  // class
  CHECK(!with(5, 0, 1).ok());  // byte order
}

TEST_CASE("elf: a real program of this host") {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto got = parse(bytes);
  REQUIRE(got.ok());
  CHECK(got->dynamic);
  bool libc = false;
  for (const auto& name : got->needed) libc = libc || name.rfind("libc.so", 0) == 0;
  CHECK(libc);
}

TEST_CASE("mpi: library names") {
  auto need = [](const char* name) {
    auto mpi = mpi_of_library(name);
    return mpi ? mpi->need : MpiWireUp::unknown;
  };
  CHECK(need("libmpi.so.40") == MpiWireUp::pmix);
  CHECK(need("libmpi_mpifh.so.40") == MpiWireUp::pmix);
  CHECK(need("libopen-pal.so.40") == MpiWireUp::pmix);
  CHECK(need("libpmix.so.2") == MpiWireUp::pmix);
  CHECK(need("libmpich.so.12") == MpiWireUp::pmi);
  CHECK(need("libmpi.so.12") == MpiWireUp::pmi);  // Intel MPI, MVAPICH
  CHECK(need("libmpi_cray.so.12") == MpiWireUp::pmi);
  CHECK(need("libpmi2.so.0") == MpiWireUp::pmi);
  CHECK(need("libpmi.so.0") == MpiWireUp::pmi);
  CHECK(need("libc.so.6") == MpiWireUp::unknown);
  CHECK(need("libmpfr.so.6") == MpiWireUp::unknown);
  CHECK(need("libmpi.so") == MpiWireUp::unknown);  // no version: cannot tell
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char pattern[] = "/tmp/lattice-elf-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return (path / name).string();
  }
};

TEST_CASE("mpi: programs, through their libraries on run paths and LD_LIBRARY_PATH") {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "lib");
  // A program linking a library of its own, which links Open MPI: found through $ORIGIN.
  dir.write("lib/libsolver.so", make_elf({true, true, {"libmpi.so.40", "libc.so.6"}, ""}));
  auto app = dir.write("app", make_elf({true, true, {"libsolver.so"}, "$ORIGIN/lib"}));
  auto got = classify_program(app, "");
  CHECK(got.need == MpiWireUp::pmix);
  CHECK(got.why == "links libmpi.so.40 (Open MPI)");
  // The same through LD_LIBRARY_PATH, with MPICH.
  std::filesystem::create_directories(dir.path / "other");
  dir.write("other/libwrap.so", make_elf({true, true, {"libmpich.so.12"}, ""}));
  auto wrapped = dir.write("wrapped", make_elf({true, true, {"libwrap.so"}, ""}));
  CHECK(classify_program(wrapped, "").need == MpiWireUp::unknown);
  CHECK(classify_program(wrapped, (dir.path / "other").string()).need == MpiWireUp::pmi);
  // Both MPIs: cannot tell. A library that is not an ELF file, and a cycle, end the search.
  dir.write("lib/libcycle.so", make_elf({true, true, {"libcycle2.so"}, "$ORIGIN"}));
  dir.write("lib/libcycle2.so", make_elf({true, true, {"libcycle.so"}, "$ORIGIN"}));
  dir.write("lib/libjunk.so", "junk");
  got = classify_program(
      dir.write("cyclic", make_elf({true, true, {"libcycle.so", "libjunk.so"}, "$ORIGIN/lib"})),
      "");
  CHECK(got.need == MpiWireUp::unknown);
  CHECK(got.why == "links no MPI library");
  auto both =
      dir.write("both", make_elf({true,
                                  true,
                                  {"libjunk.so", "libcycle.so", "libmpich.so.12", "libmpi.so.40"},
                                  "$ORIGIN/lib"}));
  got = classify_program(both, "");
  CHECK(got.need == MpiWireUp::unknown);
  CHECK(got.why == "links libmpi.so.40 (Open MPI) and libmpich.so.12 (MPICH)");
  // MPICH built over PMIx: libpmix decides.
  auto over_pmix =
      dir.write("overpmix", make_elf({true, true, {"libmpich.so.12", "libpmix.so.2"}, ""}));
  CHECK(classify_program(over_pmix, "").need == MpiWireUp::pmix);
  CHECK(classify_program(dir.write("script", "#!/bin/sh\nexec ./app\n"), "").why ==
        "a script (#!)");
  CHECK(classify_program(dir.write("static", make_elf({true, true, {}, "", false})), "").why ==
        "statically linked");
  CHECK(classify_program(dir.write("text", "hello"), "").why == "not an ELF file");
  CHECK(classify_program((dir.path / "missing").string(), "").need == MpiWireUp::unknown);
  CHECK(classify_program(dir.path.string(), "").need == MpiWireUp::unknown);  // a directory
}

TEST_CASE("mpi: this host's MPI programs") {
  for (const auto& program : {std::pair{"/usr/bin/mpichversion", MpiWireUp::pmi},
                              std::pair{"/usr/bin/ompi_info", MpiWireUp::pmix},
                              std::pair{"/usr/bin/python3", MpiWireUp::unknown}}) {
    const char* path = program.first;  // a plain variable: CAPTURE's lambda takes it
    const MpiWireUp need = program.second;
    if (::access(path, R_OK) != 0) continue;
    CAPTURE(path);
    CHECK(classify_program(path, "").need == need);
  }
}

}  // namespace
}  // namespace lattice::proc
