// Where PMIx_Spawn's children go and with what options (spawn_plan.hpp).
#include "launcher/spawn_plan.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::launcher;

namespace {

LaunchOptions parent() {
  LaunchOptions o;
  o.apps.push_back(App{4, {}, "/bin/parent", {}});
  o.nodes = 3;
  o.label = true;
  o.output = "out-%t";
  o.input_rank = 0;
  o.nodelist = "n[1-3]";
  o.exclusive = true;
  o.time_limit_ms = 60000;
  return o;
}

const std::vector<std::string> kNodes = {"n1", "n2", "n3"};

wire::SpawnRequest request(uint32_t size, std::vector<std::string> hosts = {}) {
  wire::SpawnRequest r;
  r.launch_id = "L";
  r.apps.push_back(wire::Application{"/bin/child", {"x"}, {{"K", "V"}}, size});
  r.hosts = std::move(hosts);
  return r;
}

}  // namespace

TEST_CASE("children fill the parent's nodes in blocks, as -N k -n m would") {
  auto plan = spawn_plan(parent(), kNodes, request(6));
  REQUIRE(plan);
  CHECK(plan->nodes == std::vector<int>{0, 1, 2});
  CHECK(plan->layout.ntasks == 6);
  CHECK(plan->layout.rank_nodes == std::vector<int>{0, 0, 1, 1, 2, 2});
  const LaunchOptions& o = plan->options;
  REQUIRE(o.apps.size() == 1);
  CHECK(o.apps[0].program == "/bin/child");
  CHECK(o.apps[0].args == std::vector<std::string>{"x"});
  CHECK(o.apps[0].env.size() == 1);
  CHECK(o.pmi == wire::PmiMode::pmix);
  // Shared with the parent: labels, the time limit. Not: its input, files, node choice.
  CHECK(o.label);
  CHECK(o.time_limit_ms == 60000);
  CHECK(o.input_rank == kInputNone);
  CHECK(o.output.empty());
  CHECK(o.nodelist.empty());
  CHECK_FALSE(o.exclusive);
}

TEST_CASE("fewer children than nodes use the first nodes; PMIX_HOST picks the nodes") {
  auto one = spawn_plan(parent(), kNodes, request(1));
  REQUIRE(one);
  CHECK(one->nodes == std::vector<int>{0});
  auto on_n3 = spawn_plan(parent(), kNodes, request(2, {"n3"}));
  REQUIRE(on_n3);
  CHECK(on_n3->nodes == std::vector<int>{2});
  CHECK(on_n3->layout.rank_nodes == std::vector<int>{0, 0});
  auto unknown = spawn_plan(parent(), kNodes, request(2, {"n9"}));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("'n9' is not one of the launch's nodes") != std::string::npos);
}
