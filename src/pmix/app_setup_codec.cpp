#include "pmix/app_setup_codec.hpp"

#include <cstdint>

#include "base/strings.hpp"

namespace lattice::pmix {

namespace {

constexpr std::string_view kMagic = "LPS1";

void put_u32(std::string& out, size_t n) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((n >> shift) & 0xff);
}

void put_str(std::string& out, std::string_view s) {
  put_u32(out, s.size());
  out += s;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  Result<uint32_t> u32(const char* what) {
    if (rest_.size() < 4) return make_error(cat("PMIx setup data ends inside ", what));
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(rest_[i]);
    rest_.remove_prefix(4);
    return n;
  }
  Result<std::string> str(const char* what) {
    auto n = u32(what);
    if (!n) return n.error();
    if (*n > rest_.size()) return make_error(cat("PMIx setup data ends inside ", what));
    std::string s(rest_.substr(0, *n));
    rest_.remove_prefix(*n);
    return s;
  }
  Result<char> byte(const char* what) {
    if (rest_.empty()) return make_error(cat("PMIx setup data ends inside ", what));
    char c = rest_[0];
    rest_.remove_prefix(1);
    return c;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

bool printable(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return !s.empty();
}

// A variable name as the agent's environment rules read one (proc/env_rules.hpp judges it).
bool env_name(std::string_view s) { return printable(s) && s.find('=') == std::string_view::npos; }

}  // namespace

std::string encode_app_setup(const std::vector<SetupEntry>& entries) {
  std::string out(kMagic);
  put_u32(out, entries.size());
  for (const auto& entry : entries) {
    put_str(out, entry.key);
    put_u32(out, entry.envars.size());
    for (const auto& e : entry.envars) {
      put_str(out, e.name);
      put_str(out, e.value);
      out += e.separator;
    }
  }
  return out;
}

Result<std::vector<SetupEntry>> decode_app_setup(std::string_view bytes) {
  if (bytes.size() > kMaxAppSetupBytes)
    return make_error(
        cat("PMIx setup data of ", bytes.size(), " bytes (at most ", kMaxAppSetupBytes, ")"));
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return make_error("PMIx setup data in an unknown form (not Lattice's LPS1)");
  Reader in(bytes.substr(kMagic.size()));
  auto count = in.u32("its entry count");
  if (!count) return count.error();
  if (*count > kMaxAppSetupEntries)
    return make_error(
        cat("PMIx setup data of ", *count, " entries (at most ", kMaxAppSetupEntries, ")"));
  std::vector<SetupEntry> out;
  size_t envars = 0;
  for (uint32_t i = 0; i < *count; ++i) {
    SetupEntry entry;
    auto key = in.str("an entry's key");
    if (!key) return key.error();
    if (!printable(*key) || key->size() > 511)
      return make_error("PMIx setup data with an entry key that is empty or not text");
    entry.key = std::move(*key);
    auto n = in.u32("an entry's variable count");
    if (!n) return n.error();
    if (*n > kMaxAppSetupEnvars - envars)
      return make_error(
          cat("PMIx setup data that sets more than ", kMaxAppSetupEnvars, " variables"));
    envars += *n;
    for (uint32_t j = 0; j < *n; ++j) {
      SetupEnvar e;
      auto name = in.str("a variable's name");
      if (!name) return name.error();
      if (!env_name(*name))
        return make_error(cat("PMIx setup data under ", entry.key,
                              " with a variable name that is empty or not a name"));
      auto value = in.str("a variable's value");
      if (!value) return value.error();
      if (value->find('\0') != std::string::npos)
        return make_error(cat("PMIx setup data: ", *name, "'s value holds a NUL"));
      auto sep = in.byte("a variable's separator");
      if (!sep) return sep.error();
      e.name = std::move(*name);
      e.value = std::move(*value);
      e.separator = *sep;
      entry.envars.push_back(std::move(e));
    }
    out.push_back(std::move(entry));
  }
  if (!in.done()) return make_error("PMIx setup data with bytes after its last entry");
  return out;
}

}  // namespace lattice::pmix
