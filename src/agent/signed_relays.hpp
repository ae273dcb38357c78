// Which relayed launch requests a node with certified identities takes from its parent agent
// (docs/security.md, "Relayed launches"). Its parent is certified, but speaks only for itself:
// the request must be signed by the launcher it names (wire/launch_signature.hpp), and is
// taken once; unsigned, it is taken only inside an allocation this node holds, where it runs
// as the allocation's user on the allocation's nodes, as a door launch from the parent's node
// could anyway. The head takes its request from the launcher's own link and checks none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "lattice.capnp.h"
#include "secure/certificate.hpp"
#include "secure/revocation.hpp"

namespace lattice::agent {

class SignedRelays {
 public:
  // Whether to take `request` (decoded as `spec`, allowed by may_launch_in), which came from this
  // node's parent, at `now` (Unix seconds); a signed one is remembered until it expires.
  Status admit(schema::LaunchProcessesRequest::Reader request, const LaunchSpec& spec,
               const secure::CaPublicKey& ca, const secure::RevokedKeys& revoked, uint64_t now);

 private:
  // Launches taken on a signature, by when it expires: a replay of one is refused. Bounded by
  // what certified launchers start in kMaxLaunchSignatureSeconds.
  std::unordered_set<std::string> taken_;
  std::multimap<uint64_t, std::string> expiries_;
};

}  // namespace lattice::agent
