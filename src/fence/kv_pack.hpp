// The entries of a fence chunk as one byte string, the form they travel in between agents and
// are kept in on arrival: per entry a key length, the key, a value length, the value, lengths as
// LEB128 varints (one byte below 128). Against a Cap'n Proto list of (key, value) texts this drops
// a 16-byte struct and up to 16 bytes of NULs and padding per entry: 76 instead of 104 bytes for a
// 9-byte key and a 64-byte value, and every byte saved is one less to seal, copy and open on every
// agent (issue 11). Pure functions, no capnp.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/kv_store.hpp"
#include "base/result.hpp"

namespace lattice::fence {

// A varint longer than this many bytes is refused: lengths stay below 2^28, far above any
// frame an agent accepts.
inline constexpr size_t kMaxLengthBytes = 4;

// Bytes pack() writes for `entries`.
size_t packed_size(const std::vector<KvView>& entries);
// Writes exactly packed_size(entries) bytes at `out`.
void pack(const std::vector<KvView>& entries, char* out);
// How many entries `bytes` holds; an error when a length is overlong or runs past the end.
// Empty input is no entries.
Result<size_t> count_packed(std::string_view bytes);
// The entries of `bytes`, which count_packed accepted, appended to `out` as views into it.
void view_packed(std::string_view bytes, std::vector<KvView>& out);

}  // namespace lattice::fence
