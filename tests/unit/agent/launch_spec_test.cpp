#include <doctest/doctest.h>

#include <capnp/message.h>

#include "agent/launch_spec.hpp"

using namespace lattice;
using namespace lattice::agent;

namespace {
struct Request {
  capnp::MallocMessageBuilder message;
  schema::LaunchProcessesRequest::Builder r = message.initRoot<schema::LaunchProcessesRequest>();
  Request() {
    r.setLaunchId("job-1");
    r.setEntrypoint("/bin/true");
    r.setWorldSize(4);
    r.setTasksPerNode(4);
  }
  Result<LaunchSpec> decode() { return decode_launch_request(r.asReader(), LaunchDefaults{"n0"}); }
};
}  // namespace

TEST_CASE("a minimal single-node request decodes with defaults") {
  Request req;
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->nnodes() == 1);
  CHECK(spec->peers[0].node_id == "n0");
  CHECK(spec->local_ranks() == std::vector<int>{0, 1, 2, 3});
  CHECK(spec->fence_timeout_ms == 60000);
}

TEST_CASE("rankNodes places ranks; block shorthand must be consistent") {
  Request req;
  auto peers = req.r.initPeers(2);
  peers[0].setNodeId("a");
  peers[1].setNodeId("b");
  req.r.setNodeIndex(1);
  auto nodes = req.r.initRankNodes(4);
  for (unsigned i = 0; i < 4; ++i) nodes.set(i, i % 2);
  auto spec = req.decode();
  REQUIRE(spec);
  CHECK(spec->local_ranks() == std::vector<int>{1, 3});
  CHECK(spec->nodelist() == "a,b");

  Request block;
  auto p2 = block.r.initPeers(2);
  p2[0].setNodeId("a");
  p2[1].setNodeId("b");
  block.r.setTasksPerNode(2);
  block.r.setNodeIndex(1);
  block.r.setFirstRank(1);  // should be 2
  CHECK_FALSE(block.decode());
  block.r.setFirstRank(2);
  auto ok = block.decode();
  REQUIRE(ok);
  CHECK(ok->local_ranks() == std::vector<int>{2, 3});
}

TEST_CASE("hostile or broken requests are refused with a reason") {
  auto refused = [](auto mutate, const std::string& needle) {
    Request req;
    mutate(req.r);
    auto spec = req.decode();
    REQUIRE_FALSE(spec);
    CHECK_MESSAGE(spec.error().message.find(needle) != std::string::npos, spec.error().message);
  };
  using B = schema::LaunchProcessesRequest::Builder;
  refused([](B r) { r.setLaunchId("../etc/passwd"); }, "launchId");
  refused([](B r) { r.setLaunchId(""); }, "launchId");
  refused([](B r) { r.setWorldSize(0); }, "worldSize");
  refused([](B r) { r.setEntrypoint(""); }, "entrypoint");
  refused([](B r) { r.setPmiMode(schema::PmiMode::PMIX); }, "not available");
  refused([](B r) { r.setNodeIndex(3); }, "nodeIndex");
  refused([](B r) { r.initRankNodes(2); }, "rankNodes");
  refused([](B r) { r.initEnv(1)[0].setName("A=B"); }, "environment");
  refused([](B r) { r.setTasksPerNode(0); }, "tasksPerNode");
}
