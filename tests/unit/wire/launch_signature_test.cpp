// Launch signatures: a certified launcher's signature over a relayed request holds at every
// node index, and breaks when anything else in the request changes or the signer is not the
// launcher the request names.
#include "wire/launch_signature.hpp"

#include <doctest/doctest.h>

#include <string>

#include "signed_request_support.hpp"

using namespace lattice;
using namespace lattice::testing;

namespace {

std::string why(rpc::Outgoing& m, const secure::CaPublicKey& ca, uint64_t now = kNow) {
  auto checked = wire::check_launch_signature(body(m).asReader(), ca, {}, now);
  REQUIRE_FALSE(checked);
  return checked.error().message;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a signed relayed request checks at every node index, and only unchanged") {
  Files f;
  secure::OwnIdentity ops = f.certify({secure::Role::launcher, "ops"});
  rpc::Outgoing m = request();
  CHECK(has(why(m, f.authority), "not signed by its launcher"));
  REQUIRE(wire::sign_launch(body(m), ops, kNow));
  CHECK(body(m).getLauncherSignature().getNotAfter() == kNow + wire::kLaunchSignatureSeconds);
  for (uint32_t index : {0u, 1u, 2u}) {
    body(m).setNodeIndex(index);  // what each relay changes
    auto checked = wire::check_launch_signature(body(m).asReader(), f.authority, {}, kNow);
    REQUIRE_MESSAGE(checked, checked.error().message);
    CHECK(*checked == kNow + wire::kLaunchSignatureSeconds);
  }
  // Not once the launcher's key is revoked.
  const secure::RevokedKeys revoked{ops.certificate.static_key};
  auto refused = wire::check_launch_signature(body(m).asReader(), f.authority, revoked, kNow);
  REQUIRE_FALSE(refused);
  CHECK(has(refused.error().message, ") is revoked (security.revoked)"));
  // A relay's copy (a new message, as launch_route_relay makes it) checks the same.
  rpc::Outgoing copy;
  copy.body().setLaunchProcesses(body(m).asReader());
  CHECK(wire::check_launch_signature(body(copy).asReader(), f.authority, {}, kNow + 599));

  // Anything else a relay might change breaks it.
  auto changed = [&](auto change) {
    rpc::Outgoing c;
    c.body().setLaunchProcesses(body(m).asReader());
    change(body(c));
    return why(c, f.authority);
  };
  CHECK(has(changed([](auto r) { r.setEntrypoint("/bin/sh"); }), "is not launcher ops's"));
  CHECK(has(changed([](auto r) { r.getPeers()[2].setHost("10.0.0.9"); }), "is not launcher"));
  CHECK(has(changed([](auto r) { r.getUser().setUid(0); }), "is not launcher"));
  CHECK(has(changed([](auto r) { r.setFanout(3); }), "is not launcher"));
  CHECK(has(changed([](auto r) { r.setHeadNodeIndex(1); }), "is not launcher"));
  CHECK(has(changed([](auto r) { r.getCxiCredentials().setVni(7); }), "is not launcher"));
  CHECK(has(changed([](auto r) { r.getLauncherSignature().setNotAfter(kNow + 900); }),
            "is not launcher"));
  CHECK(has(changed([](auto r) { r.getLauncherSignature().getSignature()[0] ^= 1; }),
            "is not launcher"));
  CHECK(has(changed([](auto r) { r.getLauncherSignature().setSignature(kj::ArrayPtr<uint8_t>()); }),
            "has 0 bytes"));
  // The request names another launcher than the signer's certificate.
  CHECK(has(changed([](auto r) { r.setLauncherName("lattice@rogue:1"); }),
            "claims to be launcher lattice@rogue:1 but its certificate is for launcher ops"));

  // Time: expired, or claiming to hold longer than an agent remembers.
  CHECK(has(why(m, f.authority, kNow + wire::kLaunchSignatureSeconds + 1), "expired 1 seconds"));
  rpc::Outgoing early = request();
  REQUIRE(wire::sign_launch(body(early), ops, kNow + wire::kMaxLaunchSignatureSeconds));
  CHECK(has(why(early, f.authority), "claims to hold for"));
}

TEST_CASE("a launch signature counts only from a launcher the node's authority certified") {
  Files f;
  REQUIRE(secure::generate_authority_files(f.dir + "/other.key"));
  secure::OwnIdentity stranger = f.certify({secure::Role::launcher, "ops"}, "other.key");
  rpc::Outgoing m = request();
  REQUIRE(wire::sign_launch(body(m), stranger, kNow));
  CHECK(has(why(m, f.authority), "not signed by this side's authority"));

  // Another launcher's genuine certificate, shown with a signature of its own key, for a
  // request naming "ops": refused by name.
  secure::OwnIdentity other = f.certify({secure::Role::launcher, "other"});
  rpc::Outgoing n = request();
  REQUIRE(wire::sign_launch(body(n), other, kNow));
  CHECK(has(why(n, f.authority), "claims to be launcher ops"));

  // ops's certificate beside a signature by another key: the signature does not verify.
  secure::OwnIdentity ops = f.certify({secure::Role::launcher, "ops"});
  rpc::Outgoing p = request("other");
  REQUIRE(wire::sign_launch(body(p), other, kNow));
  body(p).setLauncherName("ops");
  const std::string& cert = ops.certificate_bytes;
  body(p).getLauncherSignature().setCertificate(
      kj::arrayPtr(reinterpret_cast<const capnp::byte*>(cert.data()), cert.size()));
  CHECK(has(why(p, f.authority), "is not launcher ops's"));

  // An agent's identity (version 1) cannot sign.
  secure::OwnIdentity n1 = f.certify({secure::Role::agent, "n1"});
  rpc::Outgoing q = request();
  auto refused = wire::sign_launch(body(q), n1, kNow);
  REQUIRE_FALSE(refused);
  CHECK(has(refused.error().message, "has no signing key"));
}
