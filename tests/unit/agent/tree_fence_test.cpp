// TreeFence: the agent's fence::Reducer wired to its peers. What it sends is its own making,
// whatever its peers sent it.
#include "agent/tree_fence.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "net/loop.hpp"

using namespace lattice;
using namespace lattice::agent;

TEST_CASE(
    "a failed fence from the parent goes down as this node's own error chunk "
    "(found by fuzz_peer_pmix)") {
  net::Loop loop;
  std::vector<std::pair<std::vector<int>, rpc::Outgoing>> sent;
  std::vector<std::pair<uint64_t, std::string>> failed;
  // Four nodes, fanout 2: node 1's parent is 0, its child 3.
  TreeFence fence(
      loop, "L", 1, fence::Tree(4, 0, 2),
      [&](const std::vector<int>& nodes, rpc::Outgoing msg) {
        sent.emplace_back(nodes, std::move(msg));
      },
      [](uint64_t, KvStore) {},
      [&](uint64_t epoch, const std::string& why) { failed.emplace_back(epoch, why); },
      [](uint64_t, FencePhase) {});
  wire::FenceMessage message;
  message.launch_id = "L";
  message.down = true;
  message.from = 0;
  message.chunk.epoch = 3;
  message.chunk.index = 7;  // no chunk of a failed fence's framing is checked: it was forwarded
  message.chunk.count = 0;
  message.error = "fence 3 timed out";
  fence.receive(std::move(message));

  REQUIRE(failed.size() == 1);
  CHECK(failed[0] == std::make_pair(uint64_t{3}, std::string("fence 3 timed out")));
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].first == std::vector<int>{3});
  auto down =
      wire::decode_fence_down(sent[0].second.envelope().asReader().getBody().getPmiFenceComplete());
  REQUIRE(down);
  CHECK(down->from == 1);
  CHECK(down->error == "fence 3 timed out");
  CHECK(down->chunk.epoch == 3);
  CHECK(down->chunk.index == 0);
  CHECK(down->chunk.count == 1);
}

TEST_CASE("fence phases: the agent keeps its latest 64 fences, oldest first") {
  FencePhaseLog log;
  for (uint64_t e = 1; e <= 100; ++e)
    for (auto phase : {FencePhase::entered, FencePhase::released}) log.record(e, phase, e * 1000);
  REQUIRE(log.fences().size() == FencePhaseLog::kKept);
  CHECK(log.fences().front().epoch == 37);  // the oldest kept
  CHECK(log.fences().back().released_us == 100000);
}
