// Shared by the rpc tests: one filled-in example of every Envelope body kind, byte-stream
// chunking, and in-memory transports (a recorder, and a wire joining two sessions).
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"
#include "rpc/session.hpp"
#include "rpc/transport.hpp"

namespace lattice::rpc::test {

// One Outgoing per body kind, each with every field set to something recognisable.
std::vector<Outgoing> one_of_each_body();

// `bytes` cut into pieces of 1..max_piece bytes, driven by a seeded generator.
std::vector<std::string_view> random_pieces(std::string_view bytes, size_t max_piece,
                                            std::mt19937& rng);

// The message's canonical text form, to compare two messages field by field.
std::string text_of(schema::Envelope::Reader envelope);

// The frame of `msg` (must fit the default limit).
std::string frame_of(Outgoing& msg);

// Records what a session writes and whether it closed the transport.
class RecordingTransport : public ByteTransport {
 public:
  void write(std::string bytes) override { writes.push_back(std::move(bytes)); }
  void close() override { ++closes; }

  std::vector<std::string> writes;
  int closes = 0;
};

// One direction of a link between two sessions: queues bytes for the peer session, or hands them
// over at once when `synchronous` is set (a loopback that re-enters the sender).
class Wire : public ByteTransport {
 public:
  void write(std::string bytes) override;
  void close() override { closed = true; }
  // Delivers queued bytes to the peer in pieces of at most `piece` bytes; true if any moved.
  bool flush(size_t piece);

  Session* peer = nullptr;
  std::string queued;
  bool closed = false;
  bool synchronous = false;
};

// Two sessions back to back: `a` and `b` talk through a pair of Wires.
struct Link {
  explicit Link(Session::Handlers a_handlers = {}, Session::Handlers b_handlers = {},
                SessionOptions options = {});
  // Moves bytes both ways until both directions are quiet.
  void pump(size_t piece = 1 << 20);

  Wire a_to_b, b_to_a;
  Session a, b;
};

}  // namespace lattice::rpc::test
