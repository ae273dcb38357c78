// A node's admission of relayed requests from its parent, with certified identities: signed by
// the launcher they name and taken once, or unsigned inside an allocation.
#include "agent/signed_relays.hpp"

#include <doctest/doctest.h>

#include "../wire/signed_request_support.hpp"
#include "wire/launch_signature.hpp"

using namespace lattice;
using namespace lattice::agent;
using namespace lattice::testing;

namespace {

LaunchSpec spec_of(rpc::Outgoing& m) {
  LaunchSpec spec;
  spec.launch_id = body(m).asReader().getLaunchId();
  spec.allocation_id = body(m).asReader().getAllocationId();
  return spec;
}

}  // namespace

TEST_CASE("a signed relayed request is taken once, until its signature expires") {
  Files f;
  secure::OwnIdentity ops = f.certify({secure::Role::launcher, "ops"});
  SignedRelays relays;
  rpc::Outgoing m = request();
  REQUIRE(wire::sign_launch(body(m), ops, kNow));
  body(m).setNodeIndex(2);
  auto first = relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, kNow + 1);
  REQUIRE_MESSAGE(first, first.error().message);
  // The same request again (a compromised parent replaying it after the launch ended), or
  // signed anew by the launcher for the same launch id: refused.
  auto again = relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, kNow + 2);
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("a replay") != std::string::npos);
  rpc::Outgoing resigned = request();
  REQUIRE(wire::sign_launch(body(resigned), ops, kNow + 5));
  CHECK_FALSE(
      relays.admit(body(resigned).asReader(), spec_of(resigned), f.authority, {}, kNow + 5));
  // Forgotten once expired, when the signature no longer holds either.
  const uint64_t late = kNow + wire::kLaunchSignatureSeconds + 1;
  auto expired = relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, late);
  REQUIRE_FALSE(expired);
  CHECK(expired.error().message.find("expired") != std::string::npos);
  // Another launch is taken as the first was; a refused signature is not remembered.
  rpc::Outgoing other = request();
  body(other).setLaunchId("L2");
  rpc::Outgoing forged = request();
  body(forged).setLaunchId("L2");
  REQUIRE(wire::sign_launch(body(forged), ops, kNow));
  body(forged).setEntrypoint("/bin/sh");
  CHECK_FALSE(relays.admit(body(forged).asReader(), spec_of(forged), f.authority, {}, kNow));
  REQUIRE(wire::sign_launch(body(other), ops, kNow));
  CHECK(relays.admit(body(other).asReader(), spec_of(other), f.authority, {}, kNow));
}

TEST_CASE("an unsigned relayed request is taken only inside an allocation") {
  Files f;
  SignedRelays relays;
  rpc::Outgoing m = request();
  auto refused = relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, kNow);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("not signed by its launcher") != std::string::npos);
  body(m).setAllocationId("job-7");
  CHECK(relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, kNow));
  // Inside an allocation too, a signature that is there is checked.
  secure::OwnIdentity ops = f.certify({secure::Role::launcher, "ops"});
  REQUIRE(wire::sign_launch(body(m), ops, kNow));
  body(m).getUser().setUid(0);  // changed after signing
  CHECK_FALSE(relays.admit(body(m).asReader(), spec_of(m), f.authority, {}, kNow));
}
