// Name requests and PMIx direct modex between agents (rpc calls) round-trip; answers read back,
// errors pass through, and a response of the wrong kind is refused.
#include <doctest/doctest.h>

#include "rpc/session.hpp"
#include "wire/connect_codec.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"

using namespace lattice;
using namespace lattice::wire;

TEST_CASE("a name request and its answer read back field for field") {
  for (auto op : {pmi::NameOp::publish, pmi::NameOp::unpublish, pmi::NameOp::lookup}) {
    NameRequest sent;
    sent.launch_id = "L-1";
    sent.op = op;
    sent.name = "service";
    sent.port = "port-9";
    auto got = decode_name(name_request(sent).envelope().asReader().getBody().getPmiName());
    CHECK(got.launch_id == "L-1");
    CHECK(got.op == op);
    CHECK(got.name == "service");
    CHECK(got.port == "port-9");
  }
  auto answer = decode_name_answer(name_answer("port-42").envelope().asReader());
  REQUIRE(answer);
  CHECK(*answer == "port-42");
}

TEST_CASE("a name answer: the head's error, the call's, or a wrong kind of response") {
  Result<schema::Envelope::Reader> refused = make_error("no such name", ErrorKind::refused);
  auto got = decode_name_answer(refused);
  REQUIRE_FALSE(got);
  CHECK(got.error().message == "no such name");
  auto wrong = decode_name_answer(modex_answer("blob").envelope().asReader());
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("no PmiName") != std::string::npos);
}

TEST_CASE("a direct modex request and its answer read back; a huge rank reads as none") {
  auto got = decode_modex(modex_request({"L-2", 5}).envelope().asReader().getBody().getPmixModex());
  CHECK(got.launch_id == "L-2");
  CHECK(got.rank == 5);
  std::string blob("\x00\x01pmix\xff", 7);
  auto answer = decode_modex_answer(modex_answer(blob).envelope().asReader());
  REQUIRE(answer);
  CHECK(*answer == blob);
  rpc::Outgoing hostile;
  hostile.envelope().initBody().initPmixModex().setRank(0xffffffffu);
  CHECK(decode_modex(hostile.envelope().asReader().getBody().getPmixModex()).rank == INT32_MAX);
  auto wrong = decode_modex_answer(name_answer("p").envelope().asReader());
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("no PmixModex") != std::string::npos);
}

TEST_CASE("a PMIx name request keeps its binary value, its asker and its wait") {
  NameRequest sent;
  sent.launch_id = "L-1";
  sent.op = pmi::NameOp::publish;
  sent.name = "svc";
  sent.port = std::string("b\0\x01v", 4);
  sent.pmix = true;
  sent.nspace = "lattice.L-1";
  sent.rank = 3;
  sent.scope = 2;
  sent.first_read = true;
  sent.wait_ms = 1500;
  auto got = decode_name(name_request(sent).envelope().asReader().getBody().getPmiName());
  CHECK(got.pmix);
  CHECK(got.port == sent.port);
  CHECK(got.nspace == "lattice.L-1");
  CHECK(got.rank == 3);
  CHECK(got.scope == 2);
  CHECK(got.first_read);
  CHECK(got.wait_ms == 1500);
  auto answer = decode_name_answer(name_answer(sent.port, true).envelope().asReader());
  REQUIRE(answer);
  CHECK(*answer == sent.port);
}

TEST_CASE("a PMIx collective request reads back; malformed ones are refused") {
  CollectiveRequest sent{"L-1",
                         CollectiveKind::fence,
                         {{"lattice.L-1", 2}, {"lattice.L-1", kEveryRank}},
                         std::string("\0blob", 5),
                         ""};
  auto got =
      decode_collective(collective_request(sent).envelope().asReader().getBody().getPmixConnect());
  REQUIRE(got);
  CHECK(got.value().launch_id == "L-1");
  CHECK(got.value().kind == CollectiveKind::fence);
  CHECK(got.value().procs == sent.procs);
  CHECK(got.value().data == sent.data);
  auto empty = collective_request({"L-1", CollectiveKind::connect, {}, "", ""});
  CHECK_FALSE(decode_collective(empty.envelope().asReader().getBody().getPmixConnect()));
  auto nameless = collective_request({"L-1", CollectiveKind::connect, {{"", 0}}, "", ""});
  CHECK_FALSE(decode_collective(nameless.envelope().asReader().getBody().getPmixConnect()));
  auto answer = decode_collective_answer(collective_answer({"joined", 7}).envelope().asReader());
  REQUIRE(answer);
  CHECK(answer->data == "joined");
  CHECK(answer->context_id == 7u);
  // A group's collective names its group; no other does.
  auto group = collective_request(
      {"L-1", CollectiveKind::group_construct, {{"lattice.L-1", 0}}, "endpoints", "g1"});
  auto decoded = decode_collective(group.envelope().asReader().getBody().getPmixConnect());
  REQUIRE(decoded);
  CHECK(decoded->kind == CollectiveKind::group_construct);
  CHECK(decoded->group == "g1");
  auto unnamed =
      collective_request({"L-1", CollectiveKind::group_destruct, {{"lattice.L-1", 0}}, "", ""});
  CHECK_FALSE(decode_collective(unnamed.envelope().asReader().getBody().getPmixConnect()));
  auto named = collective_request({"L-1", CollectiveKind::connect, {{"lattice.L-1", 0}}, "", "g"});
  CHECK_FALSE(decode_collective(named.envelope().asReader().getBody().getPmixConnect()));
}
