// Framing: every body kind survives encode -> arbitrary chunking -> decode byte for byte, and
// hostile or oversized headers are refused as soon as the header shows it, before buffering.
#include "rpc/framing.hpp"

#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "rpc/limits.hpp"
#include "rpc_test_support.hpp"

using namespace lattice;
using namespace lattice::rpc;

namespace {

// A frame header: segment count - 1, then the first segment's size, little-endian.
std::string header(uint32_t count_minus_one, uint32_t first_size) {
  std::string h(8, '\0');
  for (size_t i = 0; i < 4; ++i) {
    h[i] = static_cast<char>(count_minus_one >> (8 * i));
    h[4 + i] = static_cast<char>(first_size >> (8 * i));
  }
  return h;
}

// Feeds the pieces one by one and collects every message's bytes; fails the test on an error.
std::vector<std::string> decode_all(FrameDecoder& decoder,
                                    const std::vector<std::string_view>& pieces) {
  std::vector<std::string> out;
  for (auto piece : pieces) {
    while (true) {
      auto frame = decoder.next(piece);
      REQUIRE_MESSAGE(frame.ok(), frame.error().message);
      if (frame->size() == 0) break;
      out.emplace_back(reinterpret_cast<const char*>(frame->begin()),
                       frame->size() * sizeof(capnp::word));
    }
    CHECK(piece.empty());
  }
  return out;
}

std::vector<std::string_view> single_bytes(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size(); ++i) out.push_back(s.substr(i, 1));
  return out;
}

std::string text_of_frame(const std::string& frame) {
  auto words = kj::heapArray<capnp::word>(frame.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), frame.data(), frame.size());
  capnp::FlatArrayMessageReader reader(words);
  return test::text_of(reader.getRoot<schema::Envelope>());
}

}  // namespace

TEST_CASE("the examples cover every Envelope body kind") {
  auto messages = test::one_of_each_body();
  std::set<int> kinds;
  for (auto& msg : messages) kinds.insert(static_cast<int>(msg.body().which()));
  auto body_schema = capnp::Schema::from<schema::Envelope::Body>();
  CHECK(kinds.size() == body_schema.getUnionFields().size());
  CHECK(messages.size() == kinds.size());
}

TEST_CASE("every body kind round-trips through 1-byte and random chunks") {
  auto messages = test::one_of_each_body();
  std::string stream;
  std::vector<std::string> frames, texts;
  for (auto& msg : messages) {
    frames.push_back(test::frame_of(msg));
    texts.push_back(test::text_of(msg.envelope().asReader()));
    stream += frames.back();
  }

  SUBCASE("one byte at a time") {
    FrameDecoder decoder(kMaxMessageBytes);
    CHECK(decode_all(decoder, single_bytes(stream)) == frames);
  }
  SUBCASE("random chunks, many seeds") {
    for (unsigned seed = 1; seed <= 50; ++seed) {
      std::mt19937 rng(seed);
      FrameDecoder decoder(kMaxMessageBytes);
      auto decoded = decode_all(decoder, test::random_pieces(stream, 1 + seed * 37, rng));
      REQUIRE(decoded == frames);
    }
  }
  SUBCASE("the whole stream at once, and the fields read back equal") {
    FrameDecoder decoder(kMaxMessageBytes);
    auto decoded = decode_all(decoder, {stream});
    REQUIRE(decoded.size() == texts.size());
    for (size_t i = 0; i < decoded.size(); ++i) CHECK(text_of_frame(decoded[i]) == texts[i]);
  }
}

TEST_CASE("a multi-segment message decodes") {
  // A tiny first segment forces capnp to allocate more segments as the message grows.
  capnp::MallocMessageBuilder builder(1, capnp::AllocationStrategy::FIXED_SIZE);
  auto launch = builder.initRoot<schema::Envelope>().initBody().initLaunchProcesses();
  launch.setLaunchId("job");
  auto env = launch.initEnv(40);
  for (unsigned i = 0; i < env.size(); ++i) env[i].setName(kj::str("K", i));
  REQUIRE(builder.getSegmentsForOutput().size() > 1);
  auto frame = encode_frame(builder, kMaxMessageBytes);
  REQUIRE(frame.ok());
  FrameDecoder decoder(kMaxMessageBytes);
  CHECK(decode_all(decoder, single_bytes(*frame)) == std::vector<std::string>{*frame});
}

TEST_CASE("a 16 GiB size header is refused after 8 bytes") {
  std::string bytes = header(0, 0x80000000u) + std::string(64, 'x');  // 2^31 words
  FrameDecoder decoder(kMaxMessageBytes);
  for (size_t i = 0; i < 7; ++i) {
    std::string_view one = std::string_view(bytes).substr(i, 1);
    auto frame = decoder.next(one);
    REQUIRE(frame.ok());
    CHECK(frame->size() == 0);
  }
  std::string_view rest = std::string_view(bytes).substr(7);
  auto frame = decoder.next(rest);
  REQUIRE_FALSE(frame.ok());
  CHECK(frame.error().message.find("17179869192 bytes") != std::string::npos);
  CHECK(rest.size() == bytes.size() - 8);  // nothing past the header was taken
  // The decoder stays failed: the stream has lost its framing.
  std::string_view more = "more";
  CHECK_FALSE(decoder.next(more).ok());
}

TEST_CASE("a segment count of 600 is refused") {
  std::string bytes = header(599, 1);
  std::string_view input = bytes;
  FrameDecoder decoder(kMaxMessageBytes);
  auto frame = decoder.next(input);
  REQUIRE_FALSE(frame.ok());
  CHECK(frame.error().message.find("600 segments") != std::string::npos);
}

TEST_CASE("segment counts at the edges") {
  FrameDecoder decoder(kMaxMessageBytes);
  SUBCASE("count field 0xffffffff (2^32 segments) is refused, not wrapped to 0") {
    std::string bytes = header(0xffffffffu, 0);
    std::string_view input = bytes;
    CHECK_FALSE(decoder.next(input).ok());
  }
  SUBCASE("511 segments is allowed: it waits for the rest of the table") {
    std::string bytes = header(510, 0);
    std::string_view input = bytes;
    auto frame = decoder.next(input);
    REQUIRE(frame.ok());
    CHECK(frame->size() == 0);
  }
}

TEST_CASE("the size limit is checked against the whole segment table") {
  // Two segments of 60 words each: the first word alone shows 62 words (table included), the whole
  // table 122.
  constexpr uint64_t kLimit = 100 * 8;
  std::string bytes = header(1, 60);
  bytes += std::string("\x3c\0\0\0\0\0\0\0", 8);  // second size = 60, then padding
  FrameDecoder decoder(kLimit);
  std::string_view first = std::string_view(bytes).substr(0, 8);
  auto frame = decoder.next(first);
  REQUIRE(frame.ok());
  CHECK(frame->size() == 0);
  std::string_view second = std::string_view(bytes).substr(8);
  CHECK_FALSE(decoder.next(second).ok());
}

TEST_CASE("a message exactly at the limit passes; one word over does not") {
  Outgoing msg;
  msg.body().initOutput().setLaunchId(std::string(200, 'x'));
  std::string frame = test::frame_of(msg);

  FrameDecoder exact(frame.size());
  CHECK(decode_all(exact, {frame}) == std::vector<std::string>{frame});

  FrameDecoder tight(frame.size() - 8);
  std::string_view input = frame;
  CHECK_FALSE(tight.next(input).ok());

  CHECK(encode_frame(msg.message(), frame.size()).ok());
  auto refused = encode_frame(msg.message(), frame.size() - 8);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("exceeds the limit") != std::string::npos);
}

TEST_CASE("a truncated message waits for more") {
  Outgoing msg;
  msg.body().initAbortProcesses().initFailure().setDetail("because");
  std::string frame = test::frame_of(msg);
  FrameDecoder decoder(kMaxMessageBytes);

  std::string_view most = std::string_view(frame).substr(0, frame.size() - 1);
  auto partial = decoder.next(most);
  REQUIRE(partial.ok());
  CHECK(partial->size() == 0);
  CHECK(most.empty());
  // Asking again without input changes nothing.
  std::string_view none;
  REQUIRE(decoder.next(none).ok());

  std::string_view last = std::string_view(frame).substr(frame.size() - 1);
  auto whole = decoder.next(last);
  REQUIRE(whole.ok());
  CHECK(whole->size() * 8 == frame.size());
  CHECK(std::memcmp(whole->begin(), frame.data(), frame.size()) == 0);
}

TEST_CASE("a large message grows the buffer, and the next small one still decodes") {
  Outgoing big;
  big.body().initOutput().setLaunchId(std::string(3 << 20, 'y'));  // past the retained size
  Outgoing small;
  small.body().setHeartbeat();
  std::string stream = test::frame_of(big) + test::frame_of(small);
  std::mt19937 rng(7);
  FrameDecoder decoder(kMaxMessageBytes);
  auto decoded = decode_all(decoder, test::random_pieces(stream, 65536, rng));
  REQUIRE(decoded.size() == 2);
  CHECK(text_of_frame(decoded[1]) == test::text_of(small.envelope().asReader()));
}

TEST_CASE("a header claiming 60 MiB followed by a trickle costs about what arrived") {
  constexpr uint32_t kClaimedWords = (60u << 20) / 8;  // under the 64 MiB limit
  FrameDecoder decoder(kMaxMessageBytes);
  size_t initial = decoder.buffered_capacity();
  std::string bytes = header(0, kClaimedWords) + std::string(1000, 'z');
  std::string_view input = bytes;
  auto frame = decoder.next(input);
  REQUIRE(frame.ok());
  CHECK(frame->size() == 0);
  CHECK(input.empty());
  CHECK(decoder.buffered_capacity() == initial);  // 1008 bytes fit the starting buffer

  // A trickle past the starting buffer grows it with what arrived (doubling), not to 60 MiB.
  std::string piece(4096, 'q');
  size_t fed = bytes.size();
  size_t worst_ratio_capacity = 0, worst_ratio_fed = 1;  // the largest capacity/fed seen
  while (fed < (1u << 20)) {
    std::string_view more = piece;
    REQUIRE(decoder.next(more).ok());
    fed += piece.size();
    if (decoder.buffered_capacity() * worst_ratio_fed > worst_ratio_capacity * fed) {
      worst_ratio_capacity = decoder.buffered_capacity();
      worst_ratio_fed = fed;
    }
  }
  CHECK(worst_ratio_capacity <= std::max(initial, 2 * worst_ratio_fed));
  CHECK(decoder.buffered_capacity() >= fed);
  CHECK(decoder.buffered_capacity() < (4u << 20));
}
