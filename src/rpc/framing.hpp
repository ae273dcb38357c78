// Cap'n Proto messages <-> bytes on a stream (the standard segment-table framing). The decoder
// gathers one message at a time in a word-aligned buffer and judges each header against the
// limits before it grows that buffer, so a hostile header costs us 8 bytes, not gigabytes.
#pragma once

#include <capnp/message.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::rpc {

// The message as one frame, or an error when it would exceed `max_bytes` (the peer would refuse it).
Result<std::string> encode_frame(capnp::MessageBuilder& message, uint64_t max_bytes);

class FrameDecoder {
 public:
  explicit FrameDecoder(uint64_t max_message_bytes);

  // Consumes bytes from the front of `input` and returns the next complete message's words,
  // valid until the next call. An empty array means `input` ran out first (the partial message
  // is kept). An error means the stream is unusable; every later call returns it again.
  Result<kj::ArrayPtr<const capnp::word>> next(std::string_view& input);

 private:
  // Bytes the current message needs, as far as its header tells so far; an error when the
  // header breaks a limit.
  Result<size_t> bytes_needed() const;
  void reserve(size_t bytes);

  uint64_t max_bytes_;
  kj::Array<capnp::word> buffer_;
  size_t filled_ = 0;           // bytes of the current message in buffer_
  bool delivered_ = false;      // buffer_ holds a message the caller has had
  std::optional<Error> failed_;
};

}  // namespace lattice::rpc
