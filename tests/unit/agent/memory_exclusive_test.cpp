// A launch's memory limit on this node, as the agent works it out from --mem or --mem-per-cpu,
// and --exclusive: which launches may start beside which, and what the refusal says.
#include <capnp/message.h>
#include <doctest/doctest.h>

#include "agent/exclusive.hpp"
#include "agent/launch_spec.hpp"

using namespace lattice;
using namespace lattice::agent;

namespace {

// 4 ranks, 3 of them on this node (n0) and 1 on n1, as alice.
Result<LaunchSpec> spec_of(uint64_t memory, uint64_t per_cpu, bool exclusive = false,
                           const std::string& id = "job-1", uint32_t uid = 1000,
                           const std::string& user = "alice", uint32_t cpus_per_task = 0) {
  capnp::MallocMessageBuilder message;
  auto r = message.initRoot<schema::LaunchProcessesRequest>();
  r.setLaunchId(id);
  r.setEntrypoint("/bin/true");
  r.setWorldSize(4);
  auto peers = r.initPeers(2);
  peers[0].setNodeId("n0");
  peers[1].setNodeId("n1");
  auto nodes = r.initRankNodes(4);
  for (unsigned i = 0; i < 4; ++i) nodes.set(i, i == 3 ? 1 : 0);
  auto u = r.initUser();
  u.setUid(uid);
  u.setGid(uid);
  u.setName(user);
  r.setMemoryBytes(memory);
  r.setMemoryPerCpu(per_cpu);
  r.setExclusive(exclusive);
  r.setCpusPerTask(cpus_per_task);
  LaunchDefaults defaults;
  defaults.node_id = "n0";
  auto request = wire::decode_launch_request(r.asReader());
  if (!request) return request.error();
  return make_launch_spec(*request, defaults);
}

}  // namespace

TEST_CASE("--mem is the node's limit; --mem-per-cpu is times the CPUs of its ranks here") {
  auto none = spec_of(0, 0);
  REQUIRE_MESSAGE(none, none.error().message);
  CHECK(none->memory_bytes == 0);
  auto mem = spec_of(uint64_t{64} << 20, 0);
  REQUIRE(mem);
  CHECK(mem->memory_bytes == uint64_t{64} << 20);
  auto per_cpu = spec_of(0, uint64_t{100} << 20);
  REQUIRE(per_cpu);
  CHECK(per_cpu->memory_bytes == uint64_t{300} << 20);  // 3 ranks here, one CPU each
  auto per_task = spec_of(0, uint64_t{100} << 20, false, "job-1", 1000, "alice", 2);
  REQUIRE(per_task);
  CHECK(per_task->memory_bytes == uint64_t{600} << 20);  // -c 2: 3 ranks of 2 CPUs
}

TEST_CASE("a request with both forms, or a limit past counting, is refused") {
  auto both = spec_of(uint64_t{1} << 30, uint64_t{1} << 30);
  REQUIRE_FALSE(both);
  CHECK(both.error().message ==
        "memoryBytes and memoryPerCpu (--mem, --mem-per-cpu) are mutually exclusive");
  auto huge = spec_of(0, uint64_t{1} << 61);  // x 3 CPUs
  REQUIRE_FALSE(huge);
  CHECK(huge.error().message == "--mem-per-cpu 2097152 TiB times 3 CPUs is over 2^62 bytes");
  auto wrapped = spec_of(~uint64_t{0}, 0);
  REQUIRE_FALSE(wrapped);
  CHECK(wrapped.error().message == "a memory limit over 2^62 bytes is refused");
}

TEST_CASE("--exclusive: refused beside a running launch, naming it and its user to that user") {
  auto mine = spec_of(0, 0, false, "job-1");
  auto exclusive = spec_of(0, 0, true, "job-2");
  auto bob = spec_of(0, 0, true, "job-3", 1001, "bob");
  REQUIRE(mine);
  REQUIRE(exclusive);
  REQUIRE(bob);
  CHECK(may_share_node(*exclusive, {}, "n0"));
  auto refused = may_share_node(*exclusive, {node_launch(*mine)}, "n0");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "--exclusive: node n0 already runs launch job-1 (user alice)");
  auto other = may_share_node(*bob, {node_launch(*mine)}, "n0");
  REQUIRE_FALSE(other);
  CHECK(other.error().message == "--exclusive: node n0 already runs launch job-1 (another user's)");
}

TEST_CASE("--exclusive: while it runs, every other launch is refused") {
  auto exclusive = spec_of(0, 0, true, "job-2");
  auto mine = spec_of(0, 0, false, "job-4");
  auto bob = spec_of(0, 0, false, "job-5", 1001, "bob");
  REQUIRE(exclusive);
  REQUIRE(mine);
  REQUIRE(bob);
  auto refused = may_share_node(*mine, {node_launch(*exclusive)}, "n0");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "node n0 is held by launch job-2 (user alice, --exclusive): no other launch starts "
        "there until it ends");
  auto other = may_share_node(*bob, {node_launch(*exclusive)}, "n0");
  REQUIRE_FALSE(other);
  CHECK(other.error().message ==
        "node n0 is held by launch job-2 (another user's, --exclusive): no other launch starts "
        "there until it ends");
  // Launches that share the node as they always have, without --exclusive.
  CHECK(may_share_node(*mine, {node_launch(*bob)}, "n0"));
}

TEST_CASE(
    "--exclusive: an allocation's batch step does not count, nor does a launch that "
    "only relays") {
  auto exclusive = spec_of(0, 0, true, "job-2");
  REQUIRE(exclusive);
  NodeLaunch batch{"batch", 1000, "alice", false, false};
  CHECK(may_share_node(*exclusive, {batch}, "n0"));
  auto step = spec_of(0, 0, false, "batch");
  REQUIRE(step);
  step->allocation_id = "A-1";
  step->pmi = wire::PmiMode::none;
  CHECK_FALSE(node_launch(*step).counts);
  step->hatch_command = true;  // an MPI launcher's command runs like ranks
  CHECK(node_launch(*step).counts);
  auto relay = spec_of(0, 0, false, "relay");
  REQUIRE(relay);
  relay->rank_nodes = {1, 1, 1, 1};  // nothing here
  CHECK_FALSE(node_launch(*relay).counts);
  CHECK(may_share_node(*relay, {node_launch(*exclusive)}, "n0"));
}
