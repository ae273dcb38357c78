// Revoked certificates (docs/security.md, "Node identities"): the operators list the static
// keys of identities they no longer trust (a node lost or compromised) in a file every agent
// reads (security.revoked), at its start and on SIGHUP. An agent then refuses a certificate
// for one of those keys, in a handshake or on a launch signature, as it refuses another
// authority's, and closes the links it already has with them. A key, not a name: the node is
// certified again, with a new key, under the same name.
//   The file: one static key a line, 64 hex digits (as lattice-agentd --certify prints it and
//   an agent logs its own at start), then optionally a comment; '#' lines and blank lines are
//   comments.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/certificate.hpp"

namespace lattice::secure {

constexpr size_t kMaxRevokedFile = 1 << 20;  // about 15,000 keys with comments

using RevokedKeys = std::set<StaticKey>;

// The keys of a revocation file's text; an error names the line that is not one.
Result<RevokedKeys> parse_revoked(std::string_view text);
// The file at `path` (at most kMaxRevokedFile bytes); errors name it.
Result<RevokedKeys> load_revoked_file(const std::string& path);

// A static key as the file and the logs spell it.
std::string static_key_hex(const StaticKey& key);

}  // namespace lattice::secure
