#include "wire/launch_signature.hpp"

#include <cstring>

#include "base/strings.hpp"
#include "rpc/bytes.hpp"
#include "rpc/canonical.hpp"
#include "rpc/outgoing.hpp"
#include "secure/secret.hpp"
#include "secure/signature.hpp"

namespace lattice::wire {
namespace {

// The bytes a signature covers, in guarded memory: the request may hold a CXI key.
secure::Secret signed_bytes(schema::LaunchProcessesRequest::Reader request) {
  rpc::Outgoing scratch;
  scratch.mark_secret();
  scratch.body().setLaunchProcesses(request);
  auto copy = scratch.body().getLaunchProcesses();
  copy.setNodeIndex(0);
  if (copy.hasLauncherSignature()) copy.getLauncherSignature().disownSignature();
  kj::Array<capnp::word> canonical = rpc::canonical(copy.asReader());
  auto bytes = canonical.asBytes();
  secure::Secret out(kLaunchSignatureContext.size() + bytes.size());
  std::memcpy(out.data(), kLaunchSignatureContext.data(), kLaunchSignatureContext.size());
  std::memcpy(out.data() + kLaunchSignatureContext.size(), bytes.begin(), bytes.size());
  secure::wipe(bytes.begin(), bytes.size());
  return out;
}

}  // namespace

Status sign_launch(schema::LaunchProcessesRequest::Builder request,
                   const secure::OwnIdentity& launcher, uint64_t now) {
  auto signature = request.initLauncherSignature();
  signature.setCertificate(rpc::as_data(launcher.certificate_bytes));
  signature.setNotAfter(now + kLaunchSignatureSeconds);
  secure::Secret bytes = signed_bytes(request.asReader());
  auto made = secure::sign_message(launcher, bytes.data(), bytes.size());
  if (!made) return made.error();
  signature.setSignature(kj::arrayPtr(made->data(), made->size()));
  return {};
}

Result<uint64_t> check_launch_signature(schema::LaunchProcessesRequest::Reader request,
                                        const secure::CaPublicKey& ca,
                                        const secure::RevokedKeys& revoked, uint64_t now) {
  if (!request.hasLauncherSignature()) return make_error("it is not signed by its launcher");
  auto signed_by = request.getLauncherSignature();
  auto certificate = secure::decode_certificate(rpc::as_string(signed_by.getCertificate()));
  if (!certificate)
    return make_error(cat("its signer's certificate: ", certificate.error().message));
  const secure::Identity launcher{secure::Role::launcher, request.getLauncherName()};
  if (auto certified = secure::check_certified(*certificate, ca, launcher, now); !certified)
    return make_error(cat("its signer: ", certified.error().message));
  if (!certificate->signing_key)
    return make_error("its signer's certificate has no signing key (version 1)");
  if (revoked.count(certificate->static_key))
    return make_error(cat("its signer's certificate (static key ",
                          secure::static_key_hex(certificate->static_key),
                          ") is revoked (security.revoked)"));
  const uint64_t not_after = signed_by.getNotAfter();
  if (not_after < now)
    return make_error(cat("its signature expired ", now - not_after,
                          " seconds ago (do the nodes' clocks agree?)"));
  if (not_after - now > kMaxLaunchSignatureSeconds)
    return make_error(cat("its signature claims to hold for ", not_after - now,
                          " seconds, more than ", kMaxLaunchSignatureSeconds,
                          " (do the nodes' clocks agree?)"));
  auto sig = signed_by.getSignature();
  secure::Signature signature{};
  if (sig.size() != signature.size())
    return make_error(cat("its signature has ", sig.size(), " bytes"));
  std::memcpy(signature.data(), sig.begin(), signature.size());
  secure::Secret bytes = signed_bytes(request);
  if (!secure::verify_message(*certificate, bytes.data(), bytes.size(), signature))
    return make_error(cat("its signature is not ", secure::describe(launcher),
                          "'s over this request (changed on the way?)"));
  return not_after;
}

}  // namespace lattice::wire
