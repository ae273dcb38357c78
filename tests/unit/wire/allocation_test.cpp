// An allocation's four messages round-trip field for field; what no agent could hold (a bad id,
// no user, no nodes, an index beyond them, too many GPUs, an oversized CXI key) is refused as an
// error value with its reason, from messages built directly with capnp's builders.
#include "wire/allocation.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

using namespace lattice;
using namespace lattice::wire;

namespace {

AllocationSpec every_start_field() {
  AllocationSpec s;
  s.id = "alloc-7.b_2";
  s.user = JobUser{1001, 100, std::vector<uint32_t>{100, 27}, "alice"};
  s.nodes = {{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}, {"n3", "fe80::1", 65535}};
  s.node_index = 2;
  s.time_limit_ms = 3600000;
  s.cpus = 16;
  s.memory_bytes = uint64_t{4} << 30;
  s.gpus = {"0", "GPU-5e1c"};
  auto key = std::make_shared<secure::Secret>(4);
  std::memcpy(key->data(), "\x00\x01\xfe\xff", 4);
  s.cxi.emplace(CxiKey{1234, 56, key});
  s.slurm_compat = true;
  return s;
}

Result<AllocationSpec> start_round_trip(const AllocationSpec& sent) {
  auto msg = allocation_start(sent);
  return decode_allocation_start(msg.envelope().asReader().getBody().getAllocationStart());
}

AllocationInfo every_info_field() {
  AllocationInfo info;
  info.id = "A-1";
  info.user = JobUser{1001, 1001, std::nullopt, "bob"};
  info.nodes = {{"n1", "h1", 1}, {"n2", "h2", 2}};
  info.node_index = 1;
  info.remaining_ms = 59999;
  info.slurm_compat = true;
  info.has_cxi = true;
  return info;
}

Result<AllocationInfo> info_round_trip(const AllocationInfo& sent) {
  auto msg = allocation_info(sent);
  return decode_allocation_info(msg.envelope().asReader().getBody().getAllocationInfo());
}

// A start any agent takes: a valid id, a user, one node.
void minimal_start(schema::AllocationStart::Builder s) {
  s.setAllocationId("A");
  s.initUser().setName("u");
  s.initNodes(1)[0].setNodeId("n0");
}

template <typename Set>
void start_refused(Set set, const std::string& why) {
  rpc::Outgoing msg;
  auto s = msg.envelope().initBody().initAllocationStart();
  minimal_start(s);
  set(s);
  auto got = decode_allocation_start(msg.envelope().asReader().getBody().getAllocationStart());
  REQUIRE_FALSE(got);
  CHECK_MESSAGE(got.error().message.find(why) != std::string::npos, got.error().message);
}

template <typename Set>
void info_refused(Set set, const std::string& why) {
  rpc::Outgoing msg;
  auto i = msg.envelope().initBody().initAllocationInfo();
  i.setAllocationId("A");
  i.initUser().setName("u");
  i.initNodes(1)[0].setNodeId("n0");
  set(i);
  auto got = decode_allocation_info(msg.envelope().asReader().getBody().getAllocationInfo());
  REQUIRE_FALSE(got);
  CHECK_MESSAGE(got.error().message.find(why) != std::string::npos, got.error().message);
}

}  // namespace

TEST_CASE("an allocation start with every field set reads back field for field") {
  const AllocationSpec sent = every_start_field();
  auto got = start_round_trip(sent);
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->id == "alloc-7.b_2");
  CHECK(got->user.uid == 1001);
  CHECK(got->user.gid == 100);
  CHECK(got->user.groups == sent.user.groups);
  CHECK(got->user.name == "alice");
  REQUIRE(got->nodes.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(got->nodes[i].node_id == sent.nodes[i].node_id);
    CHECK(got->nodes[i].host == sent.nodes[i].host);
    CHECK(got->nodes[i].port == sent.nodes[i].port);
  }
  CHECK(got->node_index == 2);
  CHECK(got->time_limit_ms == 3600000);
  CHECK(got->cpus == 16);
  CHECK(got->memory_bytes == uint64_t{4} << 30);
  CHECK(got->gpus == sent.gpus);
  REQUIRE(got->cxi);
  CHECK(got->cxi->vni == 1234);
  CHECK(got->cxi->svc_id == 56);
  REQUIRE(static_cast<bool>(got->cxi->auth_key));
  REQUIRE(got->cxi->auth_key->size() == 4);
  CHECK(std::memcmp(got->cxi->auth_key->data(), "\x00\x01\xfe\xff", 4) == 0);
  // The decoded key is its own copy, not the sender's.
  CHECK(got->cxi->auth_key.get() != sent.cxi->auth_key.get());
  CHECK(got->cxi->auth_key->data() != sent.cxi->auth_key->data());
  CHECK(got->slurm_compat);
}

TEST_CASE("an allocation start without optional fields reads back with their defaults") {
  AllocationSpec sent;
  sent.id = "x";
  sent.user = JobUser{0, 0, std::nullopt, "root"};
  sent.nodes = {{"only", "", 0}};
  auto got = start_round_trip(sent);
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->id == "x");
  CHECK_FALSE(got->user.groups);  // nullopt: the node's own, not an empty list
  CHECK(got->user.name == "root");
  REQUIRE(got->nodes.size() == 1);
  CHECK(got->node_index == 0);
  CHECK(got->time_limit_ms == 0);
  CHECK(got->cpus == 0);
  CHECK(got->memory_bytes == 0);
  CHECK(got->gpus.empty());
  CHECK_FALSE(got->cxi);  // no key, no CxiKey
  CHECK_FALSE(got->slurm_compat);

  // An empty group list is a list, not "the node's own".
  sent.user.groups.emplace();
  auto empty_groups = start_round_trip(sent);
  REQUIRE(empty_groups);
  REQUIRE(empty_groups->user.groups);
  CHECK(empty_groups->user.groups->empty());
}

TEST_CASE("the CXI key travels in the message and only when there is one") {
  auto with = allocation_start(every_start_field());
  auto creds = with.envelope().asReader().getBody().getAllocationStart().getCxiCredentials();
  CHECK(creds.getAuthKey().size() == 4);
  CHECK(creds.getVni() == 1234);

  AllocationSpec plain = every_start_field();
  plain.cxi.reset();
  auto without = allocation_start(plain);
  auto start = without.envelope().asReader().getBody().getAllocationStart();
  CHECK(start.getCxiCredentials().getAuthKey().size() == 0);
  auto got = decode_allocation_start(start);
  REQUIRE(got);
  CHECK_FALSE(got->cxi);
}

TEST_CASE("allocation end and ended read back field for field") {
  auto end = allocation_end(AllocationEnd{"A-1", "the batch step exited"});
  auto e = decode_allocation_end(end.envelope().asReader().getBody().getAllocationEnd());
  CHECK(e.id == "A-1");
  CHECK(e.reason == "the batch step exited");

  auto ended = allocation_ended(AllocationEnded{"A-2", 7, "time limit", true, 42});
  auto d = decode_allocation_ended(ended.envelope().asReader().getBody().getAllocationEnded());
  CHECK(d.id == "A-2");
  CHECK(d.node_index == 7);
  CHECK(d.reason == "time limit");
  CHECK(d.time_limit);
  CHECK(d.killed == 42);

  auto zero = allocation_ended(AllocationEnded{"A-3", 0, "", false, 0});
  auto z = decode_allocation_ended(zero.envelope().asReader().getBody().getAllocationEnded());
  CHECK(z.id == "A-3");
  CHECK(z.node_index == 0);
  CHECK(z.reason.empty());
  CHECK_FALSE(z.time_limit);
  CHECK(z.killed == 0);
}

TEST_CASE("an allocation info reads back field for field; the request names the id only") {
  const AllocationInfo sent = every_info_field();
  auto got = info_round_trip(sent);
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->id == "A-1");
  CHECK(got->user.uid == 1001);
  CHECK(got->user.gid == 1001);
  CHECK_FALSE(got->user.groups);
  CHECK(got->user.name == "bob");
  REQUIRE(got->nodes.size() == 2);
  CHECK(got->nodes[0].node_id == "n1");
  CHECK(got->nodes[1].host == "h2");
  CHECK(got->nodes[1].port == 2);
  CHECK(got->node_index == 1);
  CHECK(got->remaining_ms == 59999);
  CHECK(got->slurm_compat);
  CHECK(got->has_cxi);

  auto request = allocation_info_request("A-9");
  auto body = request.envelope().asReader().getBody();
  REQUIRE(body.isAllocationInfo());
  auto asked = body.getAllocationInfo();
  CHECK(std::string(asked.getAllocationId().cStr()) == "A-9");
  CHECK_FALSE(asked.hasUser());
  CHECK(asked.getNodes().size() == 0);
  // A request is not an answer: it describes no nodes.
  CHECK_FALSE(decode_allocation_info(asked));
}

TEST_CASE("allocation ids: 1..128 bytes of letters, digits and -_., not starting with '.'") {
  CHECK(valid_allocation_id("a"));
  CHECK(valid_allocation_id("0"));
  CHECK(valid_allocation_id("A-1_b.c"));
  CHECK(valid_allocation_id("a.."));
  CHECK(valid_allocation_id("-a"));
  CHECK(valid_allocation_id("_"));
  CHECK(valid_allocation_id("123e4567-e89b-12d3-a456-426614174000"));
  CHECK(valid_allocation_id(std::string(128, 'x')));

  CHECK_FALSE(valid_allocation_id(""));
  CHECK_FALSE(valid_allocation_id(std::string(129, 'x')));
  CHECK_FALSE(valid_allocation_id("."));
  CHECK_FALSE(valid_allocation_id(".."));
  CHECK_FALSE(valid_allocation_id(".hidden"));
  CHECK_FALSE(valid_allocation_id("a/b"));
  CHECK_FALSE(valid_allocation_id("/a"));
  CHECK_FALSE(valid_allocation_id("a b"));
  CHECK_FALSE(valid_allocation_id(" a"));
  CHECK_FALSE(valid_allocation_id("a\tb"));
  CHECK_FALSE(valid_allocation_id("a\nb"));
  CHECK_FALSE(valid_allocation_id(std::string("a\0b", 3)));
  CHECK_FALSE(valid_allocation_id("a=b"));
  CHECK_FALSE(valid_allocation_id("a$b"));
  CHECK_FALSE(valid_allocation_id("\xc3\xa9"));  // é: letters are ASCII ones
}

TEST_CASE("an allocation start with a bad id is refused, the id shown printable") {
  using B = schema::AllocationStart::Builder;
  start_refused([](B s) { s.setAllocationId(""); }, "'' is not an allocation id");
  start_refused([](B s) { s.setAllocationId(".x"); }, "'.x' is not an allocation id");
  start_refused([](B s) { s.setAllocationId("a/b"); }, "'a/b' is not an allocation id");
  start_refused([](B s) { s.setAllocationId("a b"); }, "is not an allocation id");
  start_refused([](B s) { s.setAllocationId(std::string(129, 'a')); }, "is not an allocation id");
  // A control byte is not written to the log as it is.
  rpc::Outgoing msg;
  auto s = msg.envelope().initBody().initAllocationStart();
  minimal_start(s);
  s.setAllocationId("a\nb");
  auto got = decode_allocation_start(msg.envelope().asReader().getBody().getAllocationStart());
  REQUIRE_FALSE(got);
  CHECK(got.error().message.find('\n') == std::string::npos);

  // 128 bytes is the longest taken.
  rpc::Outgoing longest;
  auto l = longest.envelope().initBody().initAllocationStart();
  minimal_start(l);
  l.setAllocationId(std::string(128, 'a'));
  CHECK(decode_allocation_start(longest.envelope().asReader().getBody().getAllocationStart()));
}

TEST_CASE("an allocation start without a user, nodes or a node of its own is refused") {
  using B = schema::AllocationStart::Builder;
  start_refused([](B s) { s.disownUser(); }, "the allocation names no user");
  start_refused([](B s) { s.disownNodes(); }, "an allocation of no nodes");
  start_refused([](B s) { s.initNodes(0); }, "an allocation of no nodes");
  start_refused([](B s) { s.setNodeIndex(1); }, "node index 1 of 1 nodes");
  start_refused(
      [](B s) {
        s.initNodes(3);
        s.setNodeIndex(3);
      },
      "node index 3 of 3 nodes");
  start_refused([](B s) { s.setNodeIndex(UINT32_MAX); }, "node index 4294967295 of 1 nodes");
  start_refused([](B s) { s.initNodes(kMaxAllocationNodes + 1); },
                "an allocation of 65537 nodes (at most 65536)");
}

TEST_CASE("an allocation start with too many GPUs or an oversized CXI key is refused") {
  using B = schema::AllocationStart::Builder;
  start_refused([](B s) { s.initGpus(kMaxAllocationGpus + 1); },
                "257 GPUs on one node (at most 256)");
  start_refused([](B s) { s.initCxiCredentials().initAuthKey(kMaxCxiKeyBytes + 1); },
                "a CXI auth key of 257 bytes (at most 256)");

  // The limits themselves are taken.
  rpc::Outgoing msg;
  auto s = msg.envelope().initBody().initAllocationStart();
  minimal_start(s);
  s.initGpus(kMaxAllocationGpus);
  s.initCxiCredentials().initAuthKey(kMaxCxiKeyBytes);
  auto got = decode_allocation_start(msg.envelope().asReader().getBody().getAllocationStart());
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->gpus.size() == kMaxAllocationGpus);
  REQUIRE(got->cxi);
  CHECK(got->cxi->auth_key->size() == kMaxCxiKeyBytes);

  // Credentials without a key are no credentials.
  rpc::Outgoing keyless;
  auto k = keyless.envelope().initBody().initAllocationStart();
  minimal_start(k);
  k.initCxiCredentials().setVni(5);
  auto no_key =
      decode_allocation_start(keyless.envelope().asReader().getBody().getAllocationStart());
  REQUIRE(no_key);
  CHECK_FALSE(no_key->cxi);
}

TEST_CASE("an allocation info without a user, nodes or a node of its own is refused") {
  using B = schema::AllocationInfo::Builder;
  info_refused([](B i) { i.disownUser(); }, "the allocation names no user");
  info_refused([](B i) { i.disownNodes(); }, "an allocation of no nodes");
  info_refused([](B i) { i.setNodeIndex(1); }, "node index 1 of 1 nodes");
  info_refused([](B i) { i.initNodes(kMaxAllocationNodes + 1); },
               "an allocation of 65537 nodes (at most 65536)");
}

TEST_CASE("messages of other bodies read as empty allocation messages, never crash") {
  // A default (unset) reader is what a wrong `which()` would hand the decoders.
  CHECK_FALSE(decode_allocation_start(schema::AllocationStart::Reader()));
  CHECK_FALSE(decode_allocation_info(schema::AllocationInfo::Reader()));
  auto end = decode_allocation_end(schema::AllocationEnd::Reader());
  CHECK(end.id.empty());
  auto ended = decode_allocation_ended(schema::AllocationEnded::Reader());
  CHECK(ended.killed == 0);
}
