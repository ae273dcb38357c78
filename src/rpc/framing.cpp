// Framing per capnp's stream format: (segment count - 1), each segment's size in words (all
// little-endian uint32), padding to a word, then the segments. The decoder copies exactly one
// message into its buffer and hands it out whole, so there is no tail to compact.
#include "rpc/framing.hpp"

#include <capnp/serialize.h>
#include <kj/io.h>

#include <algorithm>
#include <cstring>

#include "base/strings.hpp"
#include "base/wipe.hpp"
#include "rpc/limits.hpp"

namespace lattice::rpc {
namespace {

// Enough for every header (up to 2 KiB of segment table) and most messages without growing.
constexpr size_t kInitialBufferBytes = 16 * 1024;
// After a message larger than this the buffer is given back, so one big fence chunk does not pin
// its size for the connection's lifetime.
constexpr size_t kRetainedBufferBytes = 1024 * 1024;

size_t to_words(size_t bytes) { return (bytes + kWordBytes - 1) / kWordBytes; }

uint32_t read_le32(const capnp::word* words) {
  unsigned char b[4];
  std::memcpy(b, words, sizeof b);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

}  // namespace

Result<std::string> encode_frame(capnp::MessageBuilder& message, uint64_t max_bytes) {
  size_t bytes = capnp::computeSerializedSizeInWords(message) * kWordBytes;
  if (bytes > max_bytes)
    return make_error(
        cat("message of ", bytes, " bytes exceeds the limit of ", max_bytes, " bytes"));
  std::string frame(bytes, '\0');
  kj::ArrayOutputStream out(kj::arrayPtr(reinterpret_cast<kj::byte*>(&frame[0]), frame.size()));
  capnp::writeMessage(out, message);
  return frame;
}

FrameDecoder::FrameDecoder(uint64_t max_message_bytes)
    : max_bytes_(max_message_bytes),
      buffer_(kj::heapArray<capnp::word>(to_words(kInitialBufferBytes))) {}

Result<size_t> FrameDecoder::bytes_needed() const {
  if (filled_ < kWordBytes) return kWordBytes;  // the first word: count and first segment size
  uint64_t segments = uint64_t{read_le32(buffer_.begin())} + 1;
  if (segments >= kMaxSegments)
    return make_error(
        cat("frame header declares ", segments, " segments (limit ", kMaxSegments - 1, ")"));
  // A lower bound until the whole segment table is in; exact once it is.
  size_t words =
      capnp::expectedSizeInWordsFromPrefix(kj::arrayPtr(buffer_.begin(), filled_ / kWordBytes));
  if (words > max_bytes_ / kWordBytes)
    return make_error(cat("frame header declares at least ", uint64_t{words} * kWordBytes,
                          " bytes (limit ", max_bytes_, ")"));
  return words * kWordBytes;
}

void FrameDecoder::reserve(size_t bytes, size_t needed) {
  size_t have = buffer_.size() * kWordBytes;
  if (bytes <= have) return;
  // Doubling keeps a message arriving in small reads linear; capping at `needed` (which has
  // passed the limit check) keeps a header's claim from buying more than twice what arrived.
  size_t grown = std::min(std::max(bytes, 2 * have), needed);
  auto bigger = kj::heapArray<capnp::word>(to_words(grown));
  std::memcpy(bigger.begin(), buffer_.begin(), filled_);
  wipe_bytes(buffer_.begin(), filled_);  // messages may carry secrets (CXI keys)
  buffer_ = std::move(bigger);
}

Result<kj::ArrayPtr<const capnp::word>> FrameDecoder::next(std::string_view& input) {
  if (failed_) return *failed_;
  if (delivered_) {
    wipe_bytes(buffer_.begin(), filled_);  // the caller is done with it; it may hold a key
    delivered_ = false;
    filled_ = 0;
    if (buffer_.size() * kWordBytes > kRetainedBufferBytes)
      buffer_ = kj::heapArray<capnp::word>(to_words(kInitialBufferBytes));
  }
  while (true) {
    auto needed = bytes_needed();
    if (!needed) {
      failed_ = needed.error();
      return *failed_;
    }
    if (filled_ == *needed) {
      // The bound covers the whole segment table, so reaching it means it is exact.
      delivered_ = true;
      return kj::ArrayPtr<const capnp::word>(buffer_.begin(), filled_ / kWordBytes);
    }
    if (input.empty()) return kj::ArrayPtr<const capnp::word>();
    // Grow with the bytes in hand, not with the header's claim: a peer that announces 60 MiB
    // and then trickles costs about what it actually sent.
    size_t take = std::min(*needed - filled_, input.size());
    reserve(filled_ + take, *needed);
    std::memcpy(reinterpret_cast<char*>(buffer_.begin()) + filled_, input.data(), take);
    filled_ += take;
    input.remove_prefix(take);
  }
}

}  // namespace lattice::rpc
