// Launch signatures (docs/protocol.md, "Launch signatures"). A relayed launch reaches most of
// its nodes through other agents; with certified identities, a node takes it from its parent
// only when the launcher it names signed it, so a compromised agent cannot make one up for the
// nodes below it. Signed: kLaunchSignatureContext | the request's canonical form, nodeIndex 0
// and launcherSignature.signature null (the field a relay changes, and the signature itself).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "secure/certificate_files.hpp"
#include "secure/revocation.hpp"

namespace lattice::wire {

constexpr std::string_view kLaunchSignatureContext = "LTCLNCH\x01";
// How long a launcher's signature holds: the relays pass a request on within seconds.
constexpr uint64_t kLaunchSignatureSeconds = 600;
// An agent refuses a signature that claims to hold longer (it remembers the launches it took
// until their signatures expire, so that none is taken twice).
constexpr uint64_t kMaxLaunchSignatureSeconds = 3600;

// Signs `request` as `launcher` (a launcher's version 2 identity), valid from `now` (Unix
// seconds) for kLaunchSignatureSeconds; an error when the identity has no signing key.
Status sign_launch(schema::LaunchProcessesRequest::Builder request,
                   const secure::OwnIdentity& launcher, uint64_t now);

// The signature's not-after time when `request` carries a signature by a launcher that `ca`
// certified with the name `request.launcherName` and whose key is not `revoked`, good at `now`;
// else why not.
Result<uint64_t> check_launch_signature(schema::LaunchProcessesRequest::Reader request,
                                        const secure::CaPublicKey& ca,
                                        const secure::RevokedKeys& revoked, uint64_t now);

}  // namespace lattice::wire
