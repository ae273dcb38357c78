// Who the door lets through to libpmix: the real uid (the kernel's) decides, never the one the
// handshake claims, and nothing libpmix would refuse after looking the rank up gets through.
#include "pmix/admission.hpp"

#include <doctest/doctest.h>

#include <cstring>

namespace lattice::pmix {
namespace {

std::string credential(uint32_t uid, uint32_t gid) {
  std::string c(8, '\0');
  std::memcpy(c.data(), &uid, 4);
  std::memcpy(c.data() + 4, &gid, 4);
  return c;
}

ClientHello rank_of(const std::string& nspace, uint32_t rank, uint32_t uid, uint32_t gid) {
  ClientHello h;
  h.psec = "native";
  h.credential = credential(uid, gid);
  h.nspace = nspace;
  h.rank = rank;
  h.version = "4.2.2";
  h.bfrops = "v41";
  h.gds = "hash";
  return h;
}

const Registry kRegistry = {{"lattice.victim", {1001, 1001, {0, 1}}},
                            {"lattice.other", {1002, 1002, {0}}}};

bool said(const Status& s, const char* needle) {
  return !s && s.error().message.find(needle) != std::string::npos;
}

TEST_CASE("a rank of a registered namespace, from its own user's socket or root's, goes through") {
  CHECK(admit(rank_of("lattice.victim", 1, 1001, 1001), 1001, kRegistry));
  CHECK(admit(rank_of("lattice.victim", 0, 1001, 1001), 0, kRegistry));
}

TEST_CASE("another user posing as a rank is refused by its real uid, whatever it claims") {
  auto posing = admit(rank_of("lattice.victim", 0, 1001, 1001), 1002, kRegistry);
  CHECK(said(posing, "uid 1002 posed as rank 0 of lattice.victim, which runs as uid 1001"));
  CHECK(said(admit(rank_of("lattice.victim", 0, 1002, 1002), 1002, kRegistry), "posed as"));
}

TEST_CASE("what libpmix would refuse after looking the rank up never reaches it") {
  CHECK(said(admit(rank_of("lattice.gone", 0, 1001, 1001), 1001, kRegistry), "not a launch"));
  CHECK(said(admit(rank_of("lattice.victim", 7, 1001, 1001), 1001, kRegistry),
             "not one of this node's"));
  CHECK(said(admit(rank_of("lattice.victim", 0, 1001, 1002), 1001, kRegistry), "claimed uid"));
  CHECK(said(admit(rank_of("lattice.victim", 0, 0, 0), 0, kRegistry), "claimed uid 0"));
  auto none = rank_of("lattice.victim", 0, 1001, 1001);
  none.psec = "none";
  CHECK(said(admit(none, 1001, kRegistry), "security 'none'"));
  auto bfrops = rank_of("lattice.victim", 0, 1001, 1001);
  bfrops.bfrops = "v99";
  CHECK(said(admit(bfrops, 1001, kRegistry), "buffer module 'v99'"));
  auto gds = rank_of("lattice.victim", 0, 1001, 1001);
  gds.gds = "ds21";
  CHECK(said(admit(gds, 1001, kRegistry), "storage module 'ds21'"));
  auto cred = rank_of("lattice.victim", 0, 1001, 1001);
  cred.credential.resize(12);
  CHECK(said(admit(cred, 1001, kRegistry), "12 bytes"));
}

TEST_CASE("only users with a launch here (and root) are worth reading a handshake from") {
  CHECK(may_connect(1001, kRegistry));
  CHECK(may_connect(0, kRegistry));
  CHECK(!may_connect(1003, kRegistry));
  CHECK(!may_connect(1001, {}));
}

}  // namespace
}  // namespace lattice::pmix
