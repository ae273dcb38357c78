#include "proc/elf_dynamic.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr uint64_t kDtNull = 0;
constexpr uint64_t kDtNeeded = 1;
constexpr uint64_t kDtStrtab = 5;
constexpr uint64_t kDtStrsz = 10;
constexpr uint64_t kDtRpath = 15;
constexpr uint64_t kDtRunpath = 29;
// Program headers are 32 or 56 bytes; a file may pad them, but not without bound.
constexpr uint64_t kMaxEntrySize = 128;

// The file's layout as its header says: word size and byte order.
struct Format {
  bool is64 = true;
  bool little = true;

  uint64_t word(const char* p, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      auto byte = static_cast<uint64_t>(static_cast<unsigned char>(p[little ? n - 1 - i : i]));
      v = (v << 8) | byte;
    }
    return v;
  }
  uint64_t addr(const char* p) const { return word(p, is64 ? 8 : 4); }
};

struct Segment {
  uint32_t type = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0;
};

// Exactly `n` bytes at `offset`, or none.
std::optional<std::string> read_exact(const ByteSource& file, uint64_t offset, size_t n) {
  std::string out(n, '\0');
  if (n > 0 && file.read(offset, out.data(), n) != n) return std::nullopt;
  return out;
}

// The file offset of virtual address `vaddr` (the dynamic string table), through the loadable
// segment that holds it.
std::optional<uint64_t> file_offset(const std::vector<Segment>& segments, uint64_t vaddr) {
  for (const auto& s : segments) {
    if (s.type != kPtLoad || vaddr < s.vaddr) continue;
    uint64_t into = vaddr - s.vaddr;
    if (into >= s.filesz) continue;
    if (s.offset > UINT64_MAX - into) return std::nullopt;
    return s.offset + into;
  }
  return std::nullopt;
}

// The NUL-terminated string at `index` of a string table of `size` bytes at `table`.
Result<std::string> table_string(const ByteSource& file, uint64_t table, uint64_t size,
                                 uint64_t index) {
  if (index >= size) return make_error(cat("a name lies outside the string table (", index, ")"));
  uint64_t room = std::min<uint64_t>(size - index, kElfMaxString);
  if (table > UINT64_MAX - index) return make_error("a name lies outside the file");
  std::string bytes(static_cast<size_t>(room), '\0');
  size_t got = file.read(table + index, bytes.data(), bytes.size());
  bytes.resize(got);
  auto nul = bytes.find('\0');
  if (nul == std::string::npos)
    return make_error(
        cat("a name at ", index, " of the string table is not terminated within ", room, " bytes"));
  bytes.resize(nul);
  return bytes;
}

}  // namespace

size_t BytesSource::read(uint64_t offset, char* out, size_t n) const {
  if (offset >= bytes_.size()) return 0;
  size_t take = std::min<uint64_t>(n, bytes_.size() - offset);
  std::memcpy(out, bytes_.data() + offset, take);
  return take;
}

bool looks_like_elf(std::string_view first_bytes) {
  return first_bytes.size() >= 4 && first_bytes.substr(0, 4) == std::string_view(
                                                                    "\x7f"
                                                                    "ELF",
                                                                    4);
}

Result<ElfDynamic> read_elf_dynamic(const ByteSource& file) {
  auto header = read_exact(file, 0, 52);  // an ELF32 header; ELF64's is 64 bytes
  if (!header || !looks_like_elf(*header)) return make_error("not an ELF file");
  Format f;
  const char cls = (*header)[4], data = (*header)[5];
  if ((cls != 1 && cls != 2) || (data != 1 && data != 2))
    return make_error("an ELF file of unknown class or byte order");
  f.is64 = cls == 2;
  f.little = data == 1;
  if (f.is64) {
    header = read_exact(file, 0, 64);
    if (!header) return make_error("a truncated ELF header");
  }
  const char* h = header->data();
  const uint64_t phoff = f.is64 ? f.word(h + 32, 8) : f.word(h + 28, 4);
  const uint64_t phentsize = f.word(h + (f.is64 ? 54 : 42), 2);
  const uint64_t phnum = f.word(h + (f.is64 ? 56 : 44), 2);
  const uint64_t want_entsize = f.is64 ? 56 : 32;
  if (phnum == 0) return ElfDynamic{};  // nothing to load: no dynamic section either
  if (phnum > kElfMaxProgramHeaders)
    return make_error(cat("too many program headers (", phnum, ")"));
  if (phentsize < want_entsize || phentsize > kMaxEntrySize)
    return make_error(
        cat("program headers of ", phentsize, " bytes (", want_entsize, " expected)"));
  if (phoff > UINT64_MAX - phnum * phentsize)
    return make_error("program headers beyond the file's end");
  auto table = read_exact(file, phoff, static_cast<size_t>(phnum * phentsize));
  if (!table) return make_error("program headers beyond the file's end");

  std::vector<Segment> segments;
  std::optional<Segment> dynamic;
  for (uint64_t i = 0; i < phnum; ++i) {
    const char* p = table->data() + i * phentsize;
    Segment s;
    s.type = static_cast<uint32_t>(f.word(p, 4));
    if (f.is64) {
      s.offset = f.word(p + 8, 8);
      s.vaddr = f.word(p + 16, 8);
      s.filesz = f.word(p + 32, 8);
    } else {
      s.offset = f.word(p + 4, 4);
      s.vaddr = f.word(p + 8, 4);
      s.filesz = f.word(p + 16, 4);
    }
    if (s.type == kPtDynamic && !dynamic) dynamic = s;
    segments.push_back(s);
  }
  ElfDynamic out;
  if (!dynamic) return out;
  out.dynamic = true;

  const uint64_t entry = f.is64 ? 16 : 8;
  const uint64_t count = std::min<uint64_t>(dynamic->filesz / entry, kElfMaxDynamicEntries);
  if (dynamic->offset > UINT64_MAX - count * entry)
    return make_error("the dynamic section lies beyond the file's end");
  auto entries = read_exact(file, dynamic->offset, static_cast<size_t>(count * entry));
  if (!entries) return make_error("the dynamic section lies beyond the file's end");

  std::optional<uint64_t> strtab, strsz, runpath, rpath;
  std::vector<uint64_t> needed;
  for (uint64_t i = 0; i < count; ++i) {
    const char* p = entries->data() + i * entry;
    uint64_t tag = f.addr(p), value = f.addr(p + entry / 2);
    if (tag == kDtNull) break;
    if (tag == kDtNeeded) {
      if (needed.size() == kElfMaxNeeded)
        return make_error(cat("more than ", kElfMaxNeeded, " needed libraries"));
      needed.push_back(value);
    } else if (tag == kDtStrtab) {
      strtab = value;
    } else if (tag == kDtStrsz) {
      strsz = value;
    } else if (tag == kDtRunpath) {
      runpath = value;
    } else if (tag == kDtRpath) {
      rpath = value;
    }
  }
  if (needed.empty() && !runpath && !rpath) return out;
  if (!strtab || !strsz) return make_error("a dynamic section without its string table");
  auto table_at = file_offset(segments, *strtab);
  if (!table_at) return make_error("the dynamic string table lies in no loaded segment");
  for (uint64_t index : needed) {
    auto name = table_string(file, *table_at, *strsz, index);
    if (!name) return name.error();
    out.needed.push_back(std::move(name.value()));
  }
  for (auto [index, into] : {std::pair{runpath, &out.runpath}, std::pair{rpath, &out.rpath}}) {
    if (!index) continue;
    auto path = table_string(file, *table_at, *strsz, *index);
    if (!path) return path.error();
    *into = std::move(path.value());
  }
  return out;
}

}  // namespace lattice::proc
