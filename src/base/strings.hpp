// Small string helpers shared by every layer: concatenation for messages, strict integer
// parsing (no sign surprises, no trailing junk), splitting.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace lattice {

namespace detail {

// One piece of cat(), written as std::ostream would write it, without building a stream for
// every message (cat is on the launch and PMI paths): text as is, characters as characters,
// integers in decimal, floating point as "%g", bool as 1/0; anything else through its <<.
template <class T>
void cat_one(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> ||
                std::is_same_v<T, unsigned char>) {
    out.push_back(static_cast<char>(value));
  } else if constexpr (std::is_pointer_v<T> && std::is_convertible_v<T, const char*>) {
    if (value) out.append(value);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    out.push_back(value ? '1' : '0');
  } else if constexpr (std::is_integral_v<T>) {
    char buf[24];
    auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    out.append(buf, end);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%g", static_cast<double>(value));
    out.append(buf, static_cast<size_t>(n > 0 ? n : 0));
  } else {
    std::ostringstream stream;
    stream << value;
    out += stream.str();
  }
}

}  // namespace detail

template <class... Args>
std::string cat(const Args&... args) {
  std::string out;
  (detail::cat_one(out, args), ...);
  return out;
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Parses an optional '-' and decimal digits only; nullopt on anything else or overflow.
std::optional<int64_t> parse_int(std::string_view s);

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// `bytes` with every byte outside 0x20..0x7e, and every backslash, written as \xNN: what a peer,
// a rank or a client sent, quoted into a message, a log line or someone's terminal.
std::string printable(std::string_view bytes);
// Lower-case hex of arbitrary bytes, and back (nullopt: odd length or a non-hex digit).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

// Ranks or node indices as ranges, for people: {7,0,1,2,3} -> "0-3,7" (sorted, duplicates
// dropped).
std::string compress_ranges(std::vector<int> values);

// A size in bytes, for people: "64 MiB", "2 GiB", "1000 bytes" (the largest unit it is a
// whole number of).
std::string size_text(uint64_t bytes);

// "host:port" (host may be [v6]); nullopt when malformed.
struct HostPort {
  std::string host;
  int port = 0;
};
std::optional<HostPort> parse_host_port(std::string_view s);

}  // namespace lattice
