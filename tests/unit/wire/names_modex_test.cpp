// Name requests and PMIx modex messages between agents round-trip; hostile values read safely.
#include <doctest/doctest.h>

#include "rpc/session.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"

using namespace lattice;
using namespace lattice::wire;

TEST_CASE("a name request and its answer read back field for field") {
  for (auto op : {pmi::NameOp::publish, pmi::NameOp::unpublish, pmi::NameOp::lookup}) {
    NameMessage sent{"L-1", op, "service", "port-9", 77, true, "not found"};
    auto got = decode_name(name_message(sent).envelope().asReader().getBody().getPmiName());
    CHECK(got.launch_id == "L-1");
    CHECK(got.op == op);
    CHECK(got.name == "service");
    CHECK(got.port == "port-9");
    CHECK(got.tag == 77);
    CHECK(got.is_answer);
    CHECK(got.error == "not found");
  }
}

TEST_CASE("a name operation this agent does not know reads as a lookup, which changes nothing") {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmiName().setOp(static_cast<schema::NameOp>(77));
  CHECK(decode_name(msg.envelope().asReader().getBody().getPmiName()).op == pmi::NameOp::lookup);
}

TEST_CASE("a modex question and answer read back field for field") {
  ModexMessage sent{"L-2", 12, 99, true, std::string("\x00\x01pmix", 6), "gone"};
  auto got = decode_modex(modex_message(sent).envelope().asReader().getBody().getPmixModex());
  CHECK(got.launch_id == "L-2");
  CHECK(got.rank == 12);
  CHECK(got.tag == 99);
  CHECK(got.is_answer);
  CHECK(got.data == sent.data);
  CHECK(got.error == "gone");
}

TEST_CASE("a modex rank beyond INT32_MAX reads as INT32_MAX, never negative") {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmixModex().setRank(UINT32_MAX);
  CHECK(decode_modex(msg.envelope().asReader().getBody().getPmixModex()).rank == INT32_MAX);
}
