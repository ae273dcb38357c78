// What both handshake versions do with their bytes (internal to handshake*.cpp): big-endian
// lengths, gathering a message that arrives in pieces, and running message handlers until the
// handshake completes, fails or needs more bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::secure::handshake_bytes {

inline uint16_t read_be16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) << 8 | static_cast<uint8_t>(p[1]));
}

inline void append_be16(std::string& out, size_t value) {
  out.push_back(static_cast<char>((value >> 8) & 0xff));
  out.push_back(static_cast<char>(value & 0xff));
}

// Moves bytes from the front of `in` into `pending` until it holds `want` (never more, so what
// follows the message stays in `in`); false when `in` ran out first.
inline bool gather(std::string& pending, std::string_view& in, size_t want) {
  size_t take = std::min(want - std::min(want, pending.size()), in.size());
  pending.append(in.data(), take);
  in.remove_prefix(take);
  return pending.size() >= want;
}

// Calls `next()` (the handler of the message now awaited) while a finished message leaves bytes
// for the next one: they belong to it.
template <class Next>
Result<bool> drive(std::string_view& in, Next&& next) {
  while (true) {
    Result<bool> progress = next();
    if (!progress || *progress || in.empty()) return progress;
  }
}

}  // namespace lattice::secure::handshake_bytes
