// The version of the messages: the schema and what its fields mean. Every Envelope carries its
// sender's; peers whose versions differ by at most one work together (docs/protocol.md,
// Versions), others are refused with both versions named. The handshake's version byte
// (secure/handshake.hpp) is a separate number: the format of the handshake and the records.
#pragma once

#include <cstdint>
#include <string>

namespace lattice::rpc {

// Incremented by a release whose messages differ from the one before it. 1: release 0.1.0,
// which predates the field; 2: the Envelope's version field.
constexpr uint16_t kProtocolVersion = 2;

bool adjacent_version(uint16_t peer);
// Why a peer of version `peer` is refused, naming both versions; empty when it is adjacent.
std::string version_refusal(uint16_t peer);
// The same, said to that peer (which may not check versions itself).
std::string version_answer(uint16_t peer);
// "protocol 2 (works with 1 to 3), handshake 2", for --version.
std::string describe_versions(int handshake_version);

}  // namespace lattice::rpc
