// Codec over real client bytes (docs/pmi-wire.md §3-§5): both wires, T1 junk, ";;", thrid.
#include "pmi/codec.hpp"

#include <doctest/doctest.h>

#include "pmi_test_support.hpp"

namespace lattice::pmi {
namespace {

Command decode_ok(Wire wire, std::string body) {
  Frame f;
  f.wire = wire;
  f.body = std::move(body);
  auto cmd = decode(f);
  REQUIRE_MESSAGE(cmd.ok(), cmd.error().message);
  return std::move(cmd).value();
}

std::string decode_error(Wire wire, std::string body) {
  Frame f;
  f.wire = wire;
  f.body = std::move(body);
  auto cmd = decode(f);
  REQUIRE_FALSE(cmd.ok());
  return cmd.error().message;
}

TEST_CASE("codec: MPICH 4.0.2 PMI-1 requests") {
  auto init = decode_ok(Wire::pmi1, "cmd=init pmi_version=1 pmi_subversion=1\n");
  CHECK(init.name == "init");
  CHECK(init.fields == Fields{{"pmi_version", "1"}, {"pmi_subversion", "1"}});

  auto put = decode_ok(Wire::pmi1, "cmd=put kvsname=lattice-7 key=-bcast-1-0 value=2f6d70\n");
  CHECK(put.name == "put");
  CHECK(put.fields == Fields{{"kvsname", "lattice-7"}, {"key", "-bcast-1-0"}, {"value", "2f6d70"}});
  CHECK(*put.find("key") == "-bcast-1-0");
  CHECK(put.find("nope") == nullptr);

  // The first '=' splits; opaque keys such as hostname[3] and x-seg-1/2 pass unchanged.
  auto eq = decode_ok(Wire::pmi1, "cmd=put kvsname=k key=x-seg-1/2 value=a=b\n");
  CHECK(*eq.find("value") == "a=b");
  CHECK(decode_ok(Wire::pmi1, "cmd=barrier_in\n").fields.empty());
}

TEST_CASE("codec: PMI-1 free text continues the previous value") {
  auto abort = decode_ok(Wire::pmi1, "cmd=abort exitcode=3 msg=it  broke here\n");
  CHECK(*abort.find("exitcode") == "3");
  CHECK(*abort.find("msg") == "it broke here");
}

TEST_CASE("codec: PMI-1 mcmd=spawn block") {
  auto spawn = decode_ok(Wire::pmi1,
                         "mcmd=spawn\nnprocs=2\nexecname=./a.out\ntotspawns=1\nspawnssofar=1\n"
                         "arg1=-v\nargcnt=1\npreput_num=0\ninfo_num=0\nendcmd\n");
  CHECK(spawn.name == "spawn");
  CHECK(*spawn.find("execname") == "./a.out");
  CHECK(*spawn.find("spawnssofar") == "1");
  CHECK(spawn.fields.size() == 8);
}

TEST_CASE("codec: malformed PMI-1") {
  CHECK(decode_error(Wire::pmi1, "cmd= pmi_version=1\n").find("malformed PMI-1 line") == 0);
  CHECK(decode_error(Wire::pmi1, "cmd=init garbage pmi_version=1\n").find("\"garbage\"") !=
        std::string::npos);
  CHECK_FALSE(decode_error(Wire::pmi1, "cmd=put =x\n").empty());
  CHECK_FALSE(decode_error(Wire::pmi1, "mcmd=spawn\nnprocs\nendcmd\n").empty());
}

TEST_CASE("codec: Slurm libpmi2 requests, ';;' unescaped") {
  auto put = decode_ok(Wire::pmi2, "cmd=kvs-put;key=P0-bc;value=value;;with;;semicolons=100;");
  CHECK(put.name == "kvs-put");
  CHECK(put.fields == Fields{{"key", "P0-bc"}, {"value", "value;with;semicolons=100"}});
  auto tail = decode_ok(Wire::pmi2, "cmd=kvs-put;key=k;value=ends;;;");
  CHECK(*tail.find("value") == "ends;");
  auto empty = decode_ok(Wire::pmi2, "cmd=kvs-put;key=k;value=;");
  CHECK(*empty.find("value") == "");
  auto init = decode_ok(Wire::pmi2, "cmd=fullinit;pmijobid=lattice-9;pmirank=0;threaded=FALSE;");
  CHECK(init.fields.size() == 3);
}

TEST_CASE("codec: T1 - MPICH 4.0.2 junk after the last ';'") {
  auto nuls =
      decode_ok(Wire::pmi2, std::string("cmd=fullinit;pmirank=1;threaded=FALSE;\0\0\0\0\0\0", 44));
  CHECK(nuls.name == "fullinit");
  CHECK(nuls.fields == Fields{{"pmirank", "1"}, {"threaded", "FALSE"}});
  auto garbage = decode_ok(Wire::pmi2, "cmd=job-getid;\x90\x1f@\xb8\xfcU");
  CHECK(garbage.name == "job-getid");
  CHECK(garbage.fields.empty());
  // Junk that happens to hold '=' but no closing ';' is dropped too.
  CHECK(decode_ok(Wire::pmi2, "cmd=kvs-fence;x=\x01\x02").fields.empty());
  CHECK(decode_ok(Wire::pmi2, "cmd=kvs-fence;ab;c=d;").fields.empty());
}

TEST_CASE("codec: PMI-2 without a leading cmd= is an error") {
  CHECK(decode_error(Wire::pmi2, "key=x;cmd=kvs-get;").find("does not start with cmd=") !=
        std::string::npos);
  CHECK_FALSE(decode_error(Wire::pmi2, "cmd=;").empty());
  CHECK_FALSE(decode_error(Wire::pmi2, "cmd=kvs-get").empty());
  CHECK_FALSE(decode_error(Wire::pmi2, std::string("\0cmd=x;", 7)).empty());
}

TEST_CASE("codec: encoding both wires") {
  CHECK(
      encode(Wire::pmi1, Response{"response_to_init",
                                  {{"pmi_version", "1"}, {"pmi_subversion", "1"}, {"rc", "0"}}}) ==
      "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  CHECK(encode(Wire::pmi1, Response{"barrier_out", {}}) == "cmd=barrier_out\n");
  CHECK(encode(Wire::pmi2, Response{"kvs-fence-response", {{"rc", "0"}}}) ==
        "28    cmd=kvs-fence-response;rc=0;");
  CHECK(encode(Wire::pmi2,
               Response{"kvs-get-response", {{"found", "TRUE"}, {"value", "a;b"}, {"rc", "0"}}}) ==
        test::frame("cmd=kvs-get-response;found=TRUE;value=a;;b;rc=0;"));
  CHECK(escape_pmi2(";;x;") == ";;;;x;;");
}

TEST_CASE("codec: PMI-2 encode/decode round trip keeps every byte but NUL") {
  std::string value;
  for (int c = 1; c < 256; ++c) value += static_cast<char>(c);
  Response r{"kvs-get-response", {{"thrid", "0x55"}, {"value", value}, {"rc", "0"}}};
  std::string bytes = encode(Wire::pmi2, r);
  Framer f(kMaxFrameBytes);
  f.feed(bytes);
  auto frame = f.next();
  REQUIRE(frame.ok());
  REQUIRE(frame->has_value());
  auto cmd = decode(**frame);
  REQUIRE(cmd.ok());
  CHECK(cmd->name == r.name);
  CHECK(cmd->fields == r.fields);
}

}  // namespace
}  // namespace lattice::pmi
