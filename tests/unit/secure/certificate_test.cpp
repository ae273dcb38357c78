// Certified identities: the certificate codec and its check, the operators' files, and handshakes
// where an authority holds each side to the name and static key it was certified for.
#include "secure/certificate.hpp"

#include <doctest/doctest.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#include "base/strings.hpp"
#include "secure/certificate_files.hpp"
#include "secure/credentials.hpp"
#include "secure/revocation.hpp"
#include "secure/signature.hpp"
#include "secure_test_support.hpp"

using namespace lattice::secure;
using lattice::cat;
using namespace lattice::secure::testing;

namespace {

const uint64_t kNow = 1800000000;

struct Authority {
  CaPublicKey public_key{};
  uint8_t secret[crypto_sign_SECRETKEYBYTES] = {};
  Authority() { crypto_sign_keypair(public_key.data(), secret); }

  // A holder's identity with a fresh static key; `static_from` lends another's static secret
  // (a stolen certificate shown with one's own key).
  OwnIdentity certify(const Identity& holder, uint64_t not_after = 4000000000,
                      const OwnIdentity* static_from = nullptr) const {
    OwnIdentity own;
    random_bytes(own.static_secret.data(), kStaticKeyBytes);
    own.certificate.holder = holder;
    crypto_scalarmult_base(own.certificate.static_key.data(), own.static_secret.data());
    own.certificate.not_after = not_after;
    sign_certificate(own.certificate, secret);
    own.certificate_bytes = encode_certificate(own.certificate);
    if (static_from)
      std::memcpy(own.static_secret.data(), static_from->static_secret.data(), kStaticKeyBytes);
    return own;
  }

  Credentials credentials(const Identity& holder, bool require = true) const {
    return with(certify(holder), require);
  }
  Credentials with(OwnIdentity own, bool require = true) const {
    uint8_t key[kClusterKeyBytes];
    std::memset(key, 0x33, sizeof key);
    return Credentials(ClusterKey::from_bytes(key), std::move(own),
                       require ? std::optional<CaPublicKey>(public_key) : std::nullopt);
  }
};

StaticKey static_of(const OwnIdentity& own) {
  StaticKey key{};
  crypto_scalarmult_base(key.data(), own.static_secret.data());
  return key;
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/lattice-cert-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Why the identity file at `path`, with byte `at` flipped, is refused.
std::string refusal_with_byte_flipped(const std::string& path, size_t at) {
  std::string bytes = file_bytes(path);
  bytes[at] ^= 1;
  const std::string changed = path + ".changed";
  {
    std::ofstream out(changed, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  ::chmod(changed.c_str(), 0600);
  auto refused = load_identity_file(changed);
  REQUIRE_FALSE(refused);
  return refused.error().message;
}

const Identity kN1{Role::agent, "n1"};
const Identity kN2{Role::agent, "n2"};
const Identity kOps{Role::launcher, "ops"};

}  // namespace

TEST_CASE("a certificate encodes to its documented bytes and decodes back") {
  Authority ca;
  OwnIdentity own = ca.certify(kN1, 0x0102030405060708);
  const std::string& bytes = own.certificate_bytes;
  CHECK(bytes.size() == 8 + 2 + 2 + 32 + 8 + 64);
  CHECK(bytes.substr(0, 8) == std::string("LTCCERT\x01"));
  CHECK(bytes.substr(8, 4) == std::string("\x02\x02n1", 4));
  CHECK(bytes.substr(44, 8) == std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  auto back = decode_certificate(bytes);
  REQUIRE(back);
  CHECK(back->holder.name == "n1");
  CHECK(back->holder.role == Role::agent);
  CHECK(back->not_after == 0x0102030405060708);
  CHECK(encode_certificate(*back) == bytes);
  // Malformed: each refused by value, none read past the end.
  CHECK_FALSE(decode_certificate(""));
  CHECK_FALSE(decode_certificate(bytes.substr(0, bytes.size() - 1)));
  CHECK_FALSE(decode_certificate(bytes + "x"));
  std::string other = bytes;
  other[0] = 'X';
  CHECK(decode_certificate(other).error().message.find("magic") != std::string::npos);
  other = bytes;
  other[9] = 5;  // the name's length lies
  CHECK_FALSE(decode_certificate(other));
  other = bytes;
  other[8] = 3;  // the user role is never certified
  CHECK_FALSE(decode_certificate(other));
  other = bytes;
  other[7] = 3;  // a later version
  CHECK(decode_certificate(other).error().message.find("version 3") != std::string::npos);
  other[7] = 2;  // version 2 with no room for its signing key
  CHECK(decode_certificate(other).error().message.find("lengths disagree") != std::string::npos);

  // Version 2 adds the signing key after the static key.
  own.certificate.signing_key.emplace();
  own.certificate.signing_key->fill(0xab);
  sign_certificate(own.certificate, ca.secret);
  const std::string v2 = encode_certificate(own.certificate);
  CHECK(v2.size() == 8 + 2 + 2 + 32 + 32 + 8 + 64);
  CHECK(v2.substr(0, 8) == std::string("LTCCERT\x02"));
  CHECK(v2.substr(44, 32) == std::string(32, '\xab'));
  CHECK(v2.substr(76, 8) == std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  auto back2 = decode_certificate(v2);
  REQUIRE(back2);
  REQUIRE(back2->signing_key);
  CHECK(*back2->signing_key == *own.certificate.signing_key);
  CHECK(encode_certificate(*back2) == v2);
  CHECK(check_certified(*back2, ca.public_key, kN1, 0));
  other = v2;
  other[7] = 1;  // read as version 1, it is 32 bytes too long
  CHECK_FALSE(decode_certificate(other));
}

TEST_CASE("a certificate holds only for its authority, holder, static key and time") {
  Authority ca, other_ca;
  OwnIdentity own = ca.certify(kN1, kNow + 10);
  const StaticKey key = static_of(own);
  CHECK(check_certificate(own.certificate, ca.public_key, kN1, key, kNow));
  auto why = [&](const CaPublicKey& authority, const Identity& claimed, const StaticKey& proved,
                 uint64_t now) {
    auto checked = check_certificate(own.certificate, authority, claimed, proved, now);
    REQUIRE_FALSE(checked);
    return checked.error().message;
  };
  CHECK(why(other_ca.public_key, kN1, key, kNow).find("not signed by this side's authority") !=
        std::string::npos);
  CHECK(why(ca.public_key, kN2, key, kNow) ==
        "it claims to be agent n2 but its certificate is for agent n1");
  CHECK(why(ca.public_key, {Role::launcher, "n1"}, key, kNow).find("certificate is for agent n1") !=
        std::string::npos);
  StaticKey stranger = key;
  stranger[0] ^= 1;
  CHECK(why(ca.public_key, kN1, stranger, kNow).find("the link proved") != std::string::npos);
  CHECK(why(ca.public_key, kN1, key, kNow + 11).find("expired 1 seconds ago") != std::string::npos);
  // A changed byte anywhere in the signed part breaks the signature.
  OwnIdentity changed = ca.certify(kN1, kNow + 10);
  changed.certificate.not_after += 1;
  CHECK_FALSE(check_certificate(changed.certificate, ca.public_key, kN1, static_of(changed), kNow));
}

TEST_CASE("the operators' files: an authority, and identity files it certifies") {
  TempDir d;
  const std::string ca = d.path + "/ca.key";
  REQUIRE(generate_authority_files(ca));
  struct stat st {};
  REQUIRE(::stat(ca.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(st.st_size == 64);
  auto authority = load_authority_file(ca + ".pub");
  REQUIRE_MESSAGE(authority, authority.error().message);
  auto again = generate_authority_files(ca);
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("refusing to overwrite") != std::string::npos);

  const std::string n1 = d.path + "/n1.identity";
  REQUIRE(certify_identity(ca, kN1, 30, kNow, n1));
  REQUIRE(::stat(n1.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto own = load_identity_file(n1);
  REQUIRE_MESSAGE(own, own.error().message);
  CHECK(own->certificate.holder.name == "n1");
  CHECK(own->certificate.not_after == kNow + 30 * 86400);
  CHECK(check_certificate(own->certificate, *authority, kN1, static_of(*own), kNow));
  CHECK(certify_identity(ca, kN1, 30, kNow, n1).error().message.find("refusing to overwrite") !=
        std::string::npos);
  CHECK(certify_identity(ca, {Role::agent, "has space"}, 30, kNow, d.path + "/x")
            .error()
            .message.find("cannot be certified") != std::string::npos);

  // A static secret that is not the certificate's is refused with the file's name.
  CHECK(refusal_with_byte_flipped(n1, 10).find("for another static key") != std::string::npos);
  // Credentials check their own identity where its file is named: expired, or of another
  // authority, it would only be refused by every peer.
  REQUIRE(generate_key_file(d.path + "/cluster.key"));
  auto fine = load_credentials(d.path + "/cluster.key", n1, ca + ".pub");
  REQUIRE_MESSAGE(fine, fine.error().message);
  CHECK(fine->own()->certificate.holder.name == "n1");
  REQUIRE(certify_identity(ca, kN1, 1, 1000, d.path + "/old.identity"));
  auto expired = load_credentials(d.path + "/cluster.key", d.path + "/old.identity", "");
  REQUIRE_FALSE(expired);
  CHECK(expired.error().message.find("its certificate expired") != std::string::npos);
  REQUIRE(generate_authority_files(d.path + "/other.key"));
  auto stranger = load_credentials(d.path + "/cluster.key", n1, d.path + "/other.key.pub");
  REQUIRE_FALSE(stranger);
  CHECK(stranger.error().message.find("is not certified by the authority of") != std::string::npos);
  // An authority file of the wrong shape.
  const std::string bad = d.path + "/bad.pub";
  {
    std::ofstream out(bad);
    out << "# nothing\nabcd\n";
  }
  CHECK(load_authority_file(bad).error().message.find("64 hex digits") != std::string::npos);
  {
    std::ofstream out(bad, std::ios::trunc);
    out << std::string(8192, '#');
  }
  CHECK(load_authority_file(bad).error().message.find("holds more than 4096 bytes") !=
        std::string::npos);
}

TEST_CASE("a revocation file lists static keys, one a line, and names a bad line") {
  const std::string a(64, 'a'),
      b = "0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef";
  auto keys =
      parse_revoked(cat("# lost nodes\n\n", a, "\n  ", b, "  # n7, 2026-11-28\r\n", a, "#again\n"));
  REQUIRE_MESSAGE(keys, keys.error().message);
  CHECK(keys->size() == 2);
  StaticKey key{};
  key.fill(0xaa);
  CHECK(keys->count(key) == 1);
  CHECK(static_key_hex(key) == a);
  CHECK(parse_revoked("").value().empty());
  auto bad = parse_revoked(cat(a, "\n", a.substr(2), "\n"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("line 2 is not a static key") != std::string::npos);
  CHECK_FALSE(parse_revoked("n7\n"));
  CHECK_FALSE(parse_revoked(a + "ff\n"));
  TempDir d;
  CHECK(load_revoked_file(d.path + "/none").error().message.find("cannot read revocation file") !=
        std::string::npos);
  {
    std::ofstream out(d.path + "/big");
    out << std::string(kMaxRevokedFile + 1, '#');
  }
  CHECK(load_revoked_file(d.path + "/big").error().message.find("holds more than") !=
        std::string::npos);
}

TEST_CASE("a launcher's identity signs; an agent's does not") {
  TempDir d;
  const std::string ca = d.path + "/ca.key";
  REQUIRE(generate_authority_files(ca));
  auto authority = load_authority_file(ca + ".pub");
  REQUIRE(authority);
  const std::string ops = d.path + "/ops.identity", n1 = d.path + "/n1.identity";
  REQUIRE(certify_identity(ca, kOps, 30, kNow, ops));
  REQUIRE(certify_identity(ca, kN1, 30, kNow, n1));
  auto launcher = load_identity_file(ops);
  REQUIRE_MESSAGE(launcher, launcher.error().message);
  auto agent = load_identity_file(n1);
  REQUIRE(agent);
  // Launchers get version 2 files and certificates, with a signing key; agents version 1.
  const std::string bytes = file_bytes(ops);
  CHECK(bytes.substr(0, 8) == std::string("LTCIDNT\x02"));
  CHECK(bytes.substr(8 + 32 + 32, 8) == std::string("LTCCERT\x02"));
  REQUIRE(launcher->signing_secret);
  REQUIRE(launcher->certificate.signing_key);
  CHECK_FALSE(agent->signing_secret);
  CHECK_FALSE(agent->certificate.signing_key);
  CHECK(check_certificate(launcher->certificate, *authority, kOps, static_of(*launcher), kNow));

  const std::string message = "launch this";
  auto data = reinterpret_cast<const uint8_t*>(message.data());
  auto signature = sign_message(*launcher, data, message.size());
  REQUIRE(signature);
  CHECK(verify_message(launcher->certificate, data, message.size(), *signature));
  CHECK_FALSE(verify_message(launcher->certificate, data, message.size() - 1, *signature));
  CHECK_FALSE(verify_message(agent->certificate, data, message.size(), *signature));
  Signature changed = *signature;
  changed[5] ^= 1;
  CHECK_FALSE(verify_message(launcher->certificate, data, message.size(), changed));
  auto unsigned_ = sign_message(*agent, data, message.size());
  REQUIRE_FALSE(unsigned_);
  CHECK(unsigned_.error().message.find("has no signing key") != std::string::npos);

  // A signing seed that is not the certificate's is refused with the file's name.
  CHECK(refusal_with_byte_flipped(ops, 8 + 32 + 3).find("for another signing key") !=
        std::string::npos);

  // A version 2 launcher establishes with a certifying agent as version 1 ones do.
  uint8_t key[kClusterKeyBytes];
  std::memset(key, 0x33, sizeof key);
  Credentials as_launcher(ClusterKey::from_bytes(key), std::move(*launcher), *authority);
  Credentials as_agent(ClusterKey::from_bytes(key), std::move(*agent), *authority);
  Pair p(as_launcher, as_agent, kOps, kN1);
  REQUIRE(p.handshake());
  CHECK(p.responder.peer().name == "ops");
}

TEST_CASE("certified sides establish, each named as its certificate says") {
  Authority ca;
  auto agent = ca.credentials(kN1);
  auto launcher = ca.credentials(kOps);
  Pair p(launcher, agent, kOps, kN1);
  REQUIRE(p.handshake());
  CHECK(p.responder.peer().name == "ops");
  CHECK(p.initiator.peer().name == "n1");
  p.deliver_to_responder(p.initiator.seal("certified"));
  CHECK(p.responder_plain == "certified");
  // A side in the simple mode takes a certified peer on the cluster key, as before.
  auto simple = Credentials(ClusterKey::from_bytes(agent.cluster_key().data()));
  auto shows_only = ca.credentials(kOps, false);
  Pair q(shows_only, simple, kOps, kN2);
  REQUIRE(q.handshake());
  CHECK(q.initiator.peer().name == "n2");
}

TEST_CASE("an authority refuses peers without a certificate for what they claim") {
  Authority ca, rogue_ca;
  auto agent = ca.credentials(kN1);
  SUBCASE("no certificate: the initiator learns from M2 that one is required") {
    auto plain = Credentials(ClusterKey::from_bytes(agent.cluster_key().data()));
    Pair p(plain, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.initiator_error ==
          "agent n1 requires a certified identity and this side has none (an identity file: "
          "security.identity_file, or $LATTICE_IDENTITY_FILE)");
    CHECK(p.initiator.refusal() == Refusal::certificate);
  }
  SUBCASE("a certificate for another node: a key holder cannot claim n1") {
    auto n2 = ca.credentials(kN2, false);
    Pair p(n2, agent, kN1, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error ==
          "handshake failed: agent n1 is not certified: it claims to be agent n1 but its "
          "certificate is for agent n2");
    CHECK(p.responder.refusal() == Refusal::certificate);
    CHECK(std::string(refusal_name(p.responder.refusal())) == "certificate");
  }
  SUBCASE("another authority's certificate") {
    auto forged = rogue_ca.credentials(kOps, false);
    Pair p(forged, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error.find("not signed by this side's authority") != std::string::npos);
  }
  SUBCASE("a stolen certificate shown with another static key") {
    OwnIdentity thief_key = ca.certify(kN2);
    auto thief = ca.with(ca.certify(kOps, 4000000000, &thief_key), false);
    Pair p(thief, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error.find("the link proved") != std::string::npos);
  }
  SUBCASE("a revoked certificate, refused by its static key; then a new key for the name") {
    OwnIdentity lost = ca.certify(kOps);
    const StaticKey lost_key = lost.certificate.static_key;
    auto launcher = ca.with(std::move(lost), false);
    agent.set_revoked({lost_key});
    Pair p(launcher, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error == cat("handshake failed: launcher ops is not certified: its "
                                   "certificate (static key ",
                                   static_key_hex(lost_key), ") is revoked (security.revoked)"));
    CHECK(p.responder.refusal() == Refusal::certificate);
    auto renewed = ca.credentials(kOps, false);
    Pair q(renewed, agent, kOps, kN1);
    REQUIRE(q.handshake());
    REQUIRE(q.responder.certified_key());
    CHECK(*q.responder.certified_key() == renewed.own()->certificate.static_key);
  }
  SUBCASE("an expired certificate") {
    auto old = ca.with(ca.certify(kOps, static_cast<uint64_t>(std::time(nullptr)) - 60), false);
    Pair p(old, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error.find("expired") != std::string::npos);
  }
  SUBCASE("the initiator's authority holds the responder too") {
    auto launcher = ca.credentials(kOps);
    auto impostor = ca.credentials(kN2, false);
    Pair p(launcher, impostor, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.initiator_error.find("it claims to be agent n1 but its certificate is for agent n2") !=
          std::string::npos);
  }
  SUBCASE("handshake 2 carries no certificates, so a certifying side refuses it") {
    auto launcher = ca.credentials(kOps, false);
    launcher.initiate_version = kOldestHandshakeVersion;
    Pair p(launcher, agent, kOps, kN1);
    CHECK_FALSE(p.handshake());
    CHECK(p.responder_error.find("is not supported (this is 3 only, as it requires certified "
                                 "identities)") != std::string::npos);
    CHECK(p.responder.refusal() == Refusal::version);
  }
}
