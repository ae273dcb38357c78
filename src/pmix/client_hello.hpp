// The first bytes a PMIx client sends its server: the connection handshake libpmix's listener
// reads before it looks anything up (OpenPMIx 4.x, ptl/base: a 16-byte header whose third
// field, in the sender's byte order, counts the bytes after it; then the security module's
// name, the credential, a type flag, for a plain client its namespace and rank, and its
// version, buffer and storage modules). The agent reads it (peeked, not consumed) to decide
// whether a connection may reach libpmix at all (agent/pmix_door.hpp). A pure decoder: every
// byte comes from whoever connected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::pmix {

inline constexpr size_t kHelloHeaderBytes = 16;
// libpmix refuses more (PMIX_MAX_CRED_SIZE); the agent reads no more than a small handshake
// needs: a plain client's is about 100 bytes.
inline constexpr size_t kMaxHelloBytes = 4096;

// libpmix's connection types (pmix_rnd_flag_t): only a plain client has a namespace and rank
// it was registered under.
inline constexpr uint8_t kSimpleClient = 0;

struct ClientHello {
  std::string psec;        // the security module the client used ("native", "munge", ...)
  std::string credential;  // that module's credential (native over TCP: uid, gid)
  uint8_t flag = 0;
  std::string nspace;  // plain clients only
  uint32_t rank = 0;
  std::string version;  // "4.2.2"
  // Modules the server must have for this client; a 2.0 client names none (the server then
  // picks its own).
  std::string bfrops;
  std::string gds;
};

// The whole handshake's size, from its header (the first kHelloHeaderBytes bytes); an error
// when that is more than kMaxHelloBytes or less than a header.
Result<size_t> hello_size(std::string_view header);

// Exactly hello_size() bytes, decoded as libpmix's listener decodes them. An error for anything
// it would not accept, or that is not a plain client's handshake.
Result<ClientHello> decode_hello(std::string_view bytes);

// A native module's credential over TCP: the uid and gid the client claims (its own byte order,
// which on one host is ours).
struct NativeCredential {
  uint32_t uid = 0;
  uint32_t gid = 0;
};
Result<NativeCredential> native_credential(std::string_view credential);

}  // namespace lattice::pmix
