// Cap'n Proto messages <-> bytes on a stream (the standard segment-table framing). The decoder
// gathers one message at a time in a word-aligned buffer, judges each header against the limits
// and grows the buffer only with bytes that arrived, so a hostile header costs what it sent.
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

// The message as one frame, or an error when it would exceed `max_bytes` (the peer would refuse
// it).
Result<std::string> encode_frame(capnp::MessageBuilder& message, uint64_t max_bytes);

class FrameDecoder {
 public:
  explicit FrameDecoder(uint64_t max_message_bytes);

  // Consumes bytes from the front of `input` and returns the next complete message's words,
  // valid until the next call. An empty array means `input` ran out first (the partial message
  // is kept). An error means the stream is unusable; every later call returns it again.
  Result<kj::ArrayPtr<const capnp::word>> next(std::string_view& input);
  // Bytes the decoder holds room for now (tests check it grows with what arrived).
  size_t buffered_capacity() const { return buffer_.size() * sizeof(capnp::word); }

 private:
  // Bytes the current message needs, as far as its header tells so far; an error when the
  // header breaks a limit.
  Result<size_t> bytes_needed() const;
  // Room for at least `bytes`, growing geometrically but never past `needed`.
  void reserve(size_t bytes, size_t needed);

  uint64_t max_bytes_;
  kj::Array<capnp::word> buffer_;
  size_t filled_ = 0;       // bytes of the current message in buffer_
  bool delivered_ = false;  // buffer_ holds a message the caller has had
  std::optional<Error> failed_;
};

}  // namespace lattice::rpc
