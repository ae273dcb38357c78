// Packing and unpacking of fence chunk entries (see kv_pack.hpp).
#include "fence/kv_pack.hpp"

#include <cstdint>
#include <cstring>
#include <optional>

#include "base/strings.hpp"

namespace lattice::fence {
namespace {

size_t varint_size(size_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

char* put_varint(size_t v, char* out) {
  for (; v >= 0x80; v >>= 7) *out++ = static_cast<char>((v & 0x7f) | 0x80);
  *out++ = static_cast<char>(v);
  return out;
}

// A length from the front of `in`, consumed with it; nullopt when overlong or cut short.
std::optional<size_t> take_length(std::string_view& in) {
  size_t value = 0;
  for (size_t i = 0; i < kMaxLengthBytes && i < in.size(); ++i) {
    auto byte = static_cast<uint8_t>(in[i]);
    value |= static_cast<size_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      in.remove_prefix(i + 1);
      return value;
    }
  }
  return std::nullopt;
}

// The next `length`-prefixed string of `in`, consumed with it.
std::optional<std::string_view> take_string(std::string_view& in) {
  auto length = take_length(in);
  if (!length || *length > in.size()) return std::nullopt;
  std::string_view s = in.substr(0, *length);
  in.remove_prefix(*length);
  return s;
}

}  // namespace

size_t packed_size(const std::vector<KvView>& entries) {
  size_t bytes = 0;
  for (const auto& [key, value] : entries)
    bytes += varint_size(key.size()) + key.size() + varint_size(value.size()) + value.size();
  return bytes;
}

void pack(const std::vector<KvView>& entries, char* out) {
  for (const auto& [key, value] : entries) {
    out = put_varint(key.size(), out);
    std::memcpy(out, key.data(), key.size());
    out = put_varint(value.size(), out + key.size());
    std::memcpy(out, value.data(), value.size());
    out += value.size();
  }
}

Result<size_t> count_packed(std::string_view bytes) {
  size_t count = 0;
  for (std::string_view in = bytes; !in.empty(); ++count) {
    const size_t at = bytes.size() - in.size();
    auto key = take_string(in);
    if (!key || !take_string(in))
      return make_error(cat("packed fence entries: entry ", count, " at byte ", at,
                            " has a length that is overlong or runs past the end (", bytes.size(),
                            " bytes)"));
  }
  return count;
}

void view_packed(std::string_view bytes, std::vector<KvView>& out) {
  while (!bytes.empty()) {
    auto key = take_string(bytes);
    auto value = key ? take_string(bytes) : std::nullopt;
    if (!value) return;  // count_packed refuses such bytes before they get here
    out.emplace_back(*key, *value);
  }
}

}  // namespace lattice::fence
