// docs/protocol.md's launch signature vectors (read from the document at run time): the
// launcher's certificate and the request it signs, made from the documented inputs, their
// canonical bytes and signature as documented, and the agents' check taking the request as a
// node below the head receives it.
#include <capnp/message.h>
#include <doctest/doctest.h>
#include <sodium.h>

#include <cstring>
#include <string>

#include "base/strings.hpp"
#include "protocol_vectors.hpp"
#include "secure/certificate_files.hpp"
#include "signed_request_support.hpp"
#include "wire/launch_signature.hpp"

using namespace lattice;
using lattice::testing::ProtocolVectors;

namespace {

const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
std::string hex_of(const void* p, size_t n) {
  return to_hex(std::string_view(static_cast<const char*>(p), n));
}
std::string hex_of(kj::ArrayPtr<const capnp::word> words) {
  return hex_of(words.begin(), words.size() * sizeof(capnp::word));
}

}  // namespace

TEST_CASE("docs/protocol.md's launch signature vectors") {
  auto loaded = ProtocolVectors::load("launch");
  REQUIRE_MESSAGE(loaded, loaded.error().message);
  ProtocolVectors& v = *loaded;
  const uint64_t not_after = 1800000600;  // the request's; the launcher signed at 1800000000

  uint8_t ca_public[32], ca_secret[64];
  crypto_sign_seed_keypair(ca_public, ca_secret, u8(v.bytes("authority_seed")));
  CHECK(hex_of(ca_public, 32) == to_hex(v.bytes("authority_public")));

  secure::OwnIdentity ops;
  std::memcpy(ops.static_secret.data(), v.bytes("launcher_static_secret").data(), 32);
  ops.signing_secret.emplace(secure::kSigningSecretBytes);
  secure::Certificate& cert = ops.certificate;
  cert.holder = {secure::Role::launcher, "ops"};
  crypto_scalarmult_base(cert.static_key.data(), ops.static_secret.data());
  cert.signing_key.emplace();
  crypto_sign_seed_keypair(cert.signing_key->data(), ops.signing_secret->data(),
                           u8(v.bytes("launcher_signing_seed")));
  cert.not_after = 2000000000;
  secure::sign_certificate(cert, ca_secret);
  ops.certificate_bytes = secure::encode_certificate(cert);
  CHECK(to_hex(ops.certificate_bytes) == to_hex(v.bytes("launcher_certificate")));

  // The request as docs/protocol.md describes it, signed as the launcher signs it.
  rpc::Outgoing m = testing::request("ops", false);
  auto req = m.body().getLaunchProcesses();
  REQUIRE(wire::sign_launch(req, ops, not_after - wire::kLaunchSignatureSeconds));

  // What it signed: the context and the canonical form at node index 0 with no signature,
  // made here by the document's rule.
  rpc::Outgoing copy;
  copy.body().setLaunchProcesses(req.asReader());
  auto c = copy.body().getLaunchProcesses();
  c.getLauncherSignature().disownSignature();
  std::string signed_bytes(wire::kLaunchSignatureContext);
  kj::Array<capnp::word> canonical = capnp::canonicalize(c.asReader());
  signed_bytes += std::string(reinterpret_cast<const char*>(canonical.begin()),
                              canonical.size() * sizeof(capnp::word));
  CHECK(to_hex(signed_bytes) == to_hex(v.bytes("signed_bytes")));
  auto signature = req.getLauncherSignature().getSignature();
  CHECK(hex_of(signature.begin(), signature.size()) == to_hex(v.bytes("signature")));
  CHECK(crypto_sign_verify_detached(signature.begin(), u8(signed_bytes), signed_bytes.size(),
                                    cert.signing_key->data()) == 0);

  // As node 2 receives it: its canonical bytes, read back and checked as that node checks.
  req.setNodeIndex(2);
  kj::Array<capnp::word> at_node_2 = capnp::canonicalize(req.asReader());
  CHECK(hex_of(at_node_2) == to_hex(v.bytes("request_at_node_2")));
  const std::string& documented = v.bytes("request_at_node_2");
  REQUIRE(documented.size() % sizeof(capnp::word) == 0);
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(documented.size() / 8);
  std::memcpy(words.begin(), documented.data(), documented.size());
  kj::ArrayPtr<const capnp::word> segments[1] = {words};
  capnp::SegmentArrayMessageReader reader(segments);
  secure::CaPublicKey authority{};
  std::memcpy(authority.data(), ca_public, 32);
  auto received = reader.getRoot<schema::LaunchProcessesRequest>();
  CHECK(received.getNodeIndex() == 2);
  auto checked = wire::check_launch_signature(received, authority, {}, not_after - 1);
  REQUIRE_MESSAGE(checked, checked.error().message);
  CHECK(*checked == not_after);
  CHECK(v.unused().empty());
}
