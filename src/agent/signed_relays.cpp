#include "agent/signed_relays.hpp"

#include "base/strings.hpp"
#include "wire/launch_signature.hpp"

namespace lattice::agent {

Status SignedRelays::admit(schema::LaunchProcessesRequest::Reader request, const LaunchSpec& spec,
                           const secure::CaPublicKey& ca, const secure::RevokedKeys& revoked,
                           uint64_t now) {
  for (auto it = expiries_.begin(); it != expiries_.end() && it->first < now;) {
    taken_.erase(it->second);
    it = expiries_.erase(it);
  }
  if (!request.hasLauncherSignature()) {
    if (!spec.allocation_id.empty()) return {};
    return make_error(
        "it is not signed by its launcher (with certified identities, a node takes a relayed "
        "launch from its parent only signed, or inside an allocation it holds)");
  }
  auto not_after = wire::check_launch_signature(request, ca, revoked, now);
  if (!not_after) return not_after.error();
  if (!taken_.insert(spec.launch_id).second)
    return make_error("this node has taken that signed request already (a replay)");
  expiries_.emplace(*not_after, spec.launch_id);
  return {};
}

}  // namespace lattice::agent
