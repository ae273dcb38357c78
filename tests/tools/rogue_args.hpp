// lattice-test-rogue's command line: a hostile or outdated peer's identity, where it connects
// (or listens), and the action it takes (rogue_peer.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "secure/handshake.hpp"

namespace lattice::rogue {

extern const char* kUsage;

struct Args {
  std::string key, identity, host, door, launch = "none", action;
  int port = 0;
  bool listen = false;
  std::vector<std::string> env;      // NAME=VALUE, for the ranks of a seed-launch
  bool pmix = false;                 // --pmi pmix: a seed-launch for Open MPI's PMIx
  std::string vendor_file;           // its AppSetup.vendor: this file's bytes (RFC0029's data)
  std::optional<uint16_t> protocol;  // the version stamped on every message, if not ours
  uint8_t handshake = secure::kHandshakeVersion;
  std::string identity_file, authority_file;  // certified identities
  std::string sign_with;                      // relayed-launch: a launcher's identity file
  std::string launcher_name = "lattice@rogue:1";
  std::vector<std::string> rest;
};

// False (after which kUsage applies) for anything but a well-formed command line.
bool parse(int argc, char** argv, Args& a);

}  // namespace lattice::rogue
