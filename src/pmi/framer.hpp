// Splits one connection's byte stream into PMI messages. Decided per message: bytes starting
// with `cmd=` or `mcmd=` are a PMI-1 line (an `mcmd=` request runs to its `endcmd` line),
// anything else is a PMI-2 frame: 6 bytes of decimal length (digits and spaces), then the body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::pmi {

enum class Wire : uint8_t { pmi1 = 1, pmi2 = 2 };

// The width of the PMI-2 length field.
constexpr size_t kPmi2HeaderBytes = 6;

struct Frame {
  Wire wire = Wire::pmi1;
  std::string header;  // PMI-2: the 6 length bytes as received; PMI-1: empty
  std::string body;    // PMI-1: the line(s) with their '\n'; PMI-2: exactly the declared bytes
};

// Parses a PMI-2 length field: optional spaces, decimal digits, optional spaces, nothing else
// (MPICH pads left-aligned, some servers right-aligned). Zero and lengths over `max` are
// errors, as is anything else; the message quotes the field.
Result<size_t> parse_frame_length(std::string_view field, size_t max);

class Framer {
 public:
  explicit Framer(size_t max_frame) : max_frame_(max_frame) {}

  void feed(std::string_view bytes) { buf_.append(bytes.data(), bytes.size()); }
  // The next complete message; nullopt when more bytes are needed. After an error the stream
  // cannot be resynchronised: the caller drops the connection.
  Result<std::optional<Frame>> next();
  // Bytes received but not yet returned as a message (a partial one at EOF).
  size_t pending_bytes() const { return buf_.size() - start_; }

 private:
  Result<std::optional<Frame>> next_line(std::string_view terminator);
  Result<std::optional<Frame>> next_pmi2();
  void consume(size_t n);

  size_t max_frame_;
  std::string buf_;
  size_t start_ = 0;    // first unconsumed byte of buf_
  size_t scanned_ = 0;  // bytes after start_ already searched for a line end (byte-at-a-time input)
};

}  // namespace lattice::pmi
