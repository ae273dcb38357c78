#include "rpc/version.hpp"

#include "base/strings.hpp"

namespace lattice::rpc {

bool adjacent_version(uint16_t peer) {
  return peer + 1 >= kProtocolVersion && peer <= kProtocolVersion + 1;
}

namespace {

std::string refusal(uint16_t peer, const char* theirs, const char* ours) {
  if (adjacent_version(peer)) return {};
  return cat(theirs, " protocol version ", peer, " and ", ours, " ", kProtocolVersion,
             ": only adjacent versions (", kProtocolVersion - 1, " to ", kProtocolVersion + 1,
             ") work together; upgrade the older side");
}

}  // namespace

std::string version_refusal(uint16_t peer) { return refusal(peer, "the peer speaks", "this side"); }

std::string version_answer(uint16_t peer) { return refusal(peer, "you speak", "this peer"); }

std::string describe_versions(int handshake_version) {
  return cat("protocol ", kProtocolVersion, " (works with ", kProtocolVersion - 1, " to ",
             kProtocolVersion + 1, "), handshake ", handshake_version);
}

}  // namespace lattice::rpc
