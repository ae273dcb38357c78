// Small string helpers shared by every layer: concatenation for messages, strict integer
// parsing (no sign surprises, no trailing junk), splitting.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace lattice {

template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Parses an optional '-' and decimal digits only; nullopt on anything else or overflow.
std::optional<int64_t> parse_int(std::string_view s);

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Lower-case hex of arbitrary bytes, and back (nullopt: odd length or a non-hex digit).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

// Ranks or node indices as ranges, for people: {7,0,1,2,3} -> "0-3,7" (sorted, duplicates
// dropped).
std::string compress_ranges(std::vector<int> values);

// "host:port" (host may be [v6]); nullopt when malformed.
struct HostPort {
  std::string host;
  int port = 0;
};
std::optional<HostPort> parse_host_port(std::string_view s);

}  // namespace lattice
