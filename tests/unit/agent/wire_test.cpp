// The two sides of the schema agree: what the launcher's wire module writes, the agent's reads
// back field for field, and the other way round (structured stragglers included).
#include "launcher/wire.hpp"

#include <doctest/doctest.h>

#include "../fence/kv_views.hpp"
#include "agent/launch_spec.hpp"
#include "rpc/session.hpp"

using namespace lattice;

TEST_CASE("a launch request written by the launcher is the spec the agent decodes") {
  launcher::LaunchOptions options;
  options.apps = {launcher::App{0, {{"BAR", "new"}}, "/bin/echo", {"a", "b c"}}};
  options.fence_timeout_ms = 1500;
  options.fanout = 4;
  options.pmi_port = true;
  options.sched = "batch";
  // FOO harvested by --export, BAR given with --env (which wins over a harvested BAR and an
  // assigned one), BAZ and BAR assigned with --export NAME=VALUE (winning over harvested).
  launcher::wire::JobRequest request{"L-1",
                                     {1000, 1000, {1000, 27}, "alice"},
                                     {{"FOO", "bar"}, {"BAR", "old"}, {"BAZ", "harvested"}},
                                     {{"BAR", "assigned"}, {"BAZ", "assigned"}}};
  launcher::Layout layout{3, 2, {0, 0, 1}};
  std::vector<launcher::wire::Peer> peers{{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}};
  auto msg = launcher::wire::launch_request(
      options, request, layout, launcher::wire::launch_nodes(peers, layout), 1, "/home/alice");

  agent::LaunchDefaults defaults;
  defaults.node_id = "n2";
  defaults.agent_uid = 0;
  auto spec = agent::decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses(),
                                           defaults);
  REQUIRE(spec);
  CHECK(spec->launch_id == "L-1");
  REQUIRE(spec->apps.size() == 1);
  CHECK(spec->apps[0].entrypoint == "/bin/echo");
  CHECK(spec->apps[0].args == std::vector<std::string>{"a", "b c"});
  CHECK(spec->apps[0].size == 3);
  CHECK(spec->world_size == 3);
  CHECK(spec->node_index == 1);
  CHECK(spec->head_node == 0);
  CHECK(spec->rank_nodes == std::vector<int>{0, 0, 1});
  CHECK(spec->local_ranks() == std::vector<int>{2});
  CHECK(spec->peers.size() == 2);
  CHECK(spec->peers[1].host == "10.0.0.2");
  CHECK(spec->peers[1].port == 7401);
  CHECK(spec->fence_timeout_ms == 1500);
  CHECK(spec->fanout == 4);
  CHECK(spec->use_pmi_port);
  CHECK(spec->sched == agent::RankScheduling::batch);
  CHECK(spec->workdir == "/home/alice");
  CHECK(spec->user.name == "alice");
  REQUIRE(spec->user.groups);
  CHECK(*spec->user.groups == std::vector<uint32_t>{1000, 27});
  CHECK(spec->env == std::vector<std::pair<std::string, std::string>>{
                         {"BAR", "new"}, {"BAZ", "assigned"}, {"FOO", "bar"}});
}

TEST_CASE("a root job's hooks: harvested ones come back as left out, assigned ones refused") {
  launcher::LaunchOptions options;
  options.apps = {launcher::App{0, {}, "/bin/true", {}}};
  launcher::wire::JobRequest request{
      "L-4", {0, 0, {}, "root"}, {{"BASH_ENV", "/tmp/a"}, {"OMP_NUM_THREADS", "2"}}, {}};
  launcher::Layout layout{1, 1, {0}};
  std::vector<launcher::wire::Peer> peers{{"n1", "10.0.0.1", 7400}};
  agent::LaunchDefaults defaults;
  defaults.node_id = "n1";
  defaults.allow_root_jobs = true;
  auto decode = [&] {
    auto msg = launcher::wire::launch_request(options, request, layout,
                                              launcher::wire::launch_nodes(peers, layout), 0, "");
    return agent::decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses(),
                                        defaults);
  };
  auto spec = decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->env_left_out == std::vector<std::string>{"BASH_ENV"});

  request.assigned = {{"PYTHONPATH", "/tmp/py"}};
  auto refused = decode();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("PYTHONPATH may not be set for a job running as root") !=
        std::string::npos);
  options.apps.push_back(launcher::App{0, {}, "/bin/true", {}});  // MPMD: the launch's env
  layout = launcher::Layout{2, 1, {0, 0}};
  CHECK_FALSE(decode());
  defaults.root_env_allowed = {"PYTHONPATH"};
  spec = decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->env == std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "2"},
                                                                      {"PYTHONPATH", "/tmp/py"}});
}

namespace {

// A one-app launch of `nodes` nodes named n1.. at 10.1.X.Y:7400 (as a cluster numbers them),
// `per_node` ranks each, block or cyclic, as node `index` decodes it; and the request's size.
struct Decoded {
  Result<agent::LaunchSpec> spec;
  size_t bytes;
};
Decoded numbered_launch(int nodes, int per_node, bool cyclic, int index,
                        std::vector<launcher::wire::Peer> peers = {}) {
  launcher::LaunchOptions options;
  options.apps = {launcher::App{0, {}, "/bin/true", {}}};
  launcher::wire::JobRequest request{"L-9", {1000, 1000, {}, "alice"}, {}};
  launcher::Layout layout{nodes * per_node, nodes, {}};
  for (int r = 0; r < nodes * per_node; ++r)
    layout.rank_nodes.push_back(cyclic ? r % nodes : r / per_node);
  if (peers.empty())
    for (int n = 0; n < nodes; ++n)
      peers.push_back({cat("n", n + 1), cat("10.1.", n / 256, '.', n % 256), 7400});
  std::string self = peers[static_cast<size_t>(index)].node_id;
  auto msg = launcher::wire::launch_request(
      options, request, layout, launcher::wire::launch_nodes(std::move(peers), layout), index, "");
  agent::LaunchDefaults defaults;
  defaults.node_id = self;
  auto spec = agent::decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses(),
                                           defaults);
  auto frame = rpc::encode_notification(msg);
  REQUIRE(frame);
  return {std::move(spec), frame->size()};
}

}  // namespace

TEST_CASE("a launch request's size does not grow with the nodes when they are numbered") {
  auto small = numbered_launch(16, 1, false, 3);
  auto large = numbered_launch(4096, 1, false, 4000);
  REQUIRE_MESSAGE(small.spec, small.spec.error().message);
  REQUIRE_MESSAGE(large.spec, large.spec.error().message);
  // 16 host-list items of 256 addresses each against one: a few bytes per 256 nodes.
  CHECK(large.bytes < small.bytes + 16 * 24);
  CHECK(large.spec->peers.size() == 4096);
  CHECK(large.spec->peers[4000].node_id == "n4001");
  CHECK(large.spec->peers[4000].host == "10.1.15.160");
  CHECK(large.spec->peers[4000].port == 7400);
  CHECK(large.spec->local_ranks() == std::vector<int>{4000});

  auto cyclic = numbered_launch(64, 4, true, 5);
  REQUIRE(cyclic.spec);
  CHECK(cyclic.spec->local_ranks() == std::vector<int>{5, 69, 133, 197});
  auto block = numbered_launch(64, 4, false, 5);
  REQUIRE(block.spec);
  CHECK(block.spec->local_ranks() == std::vector<int>{20, 21, 22, 23});
  CHECK(block.bytes < small.bytes + 32);
}

TEST_CASE("names a host list cannot hold travel as the list, and decode the same") {
  std::vector<launcher::wire::Peer> odd{{"a[1]", "h1", 7400}, {"b", "h2", 7401}};
  auto decoded = numbered_launch(2, 1, false, 1, odd);
  REQUIRE_MESSAGE(decoded.spec, decoded.spec.error().message);
  CHECK(decoded.spec->peers[0].node_id == "a[1]");
  CHECK(decoded.spec->peers[1].port == 7401);
}

TEST_CASE("an MPMD launch reads back as apps with their ranks, args and own env") {
  launcher::LaunchOptions options;
  options.apps = {launcher::App{2, {{"A", "1"}}, "./a", {"argA"}},
                  launcher::App{3, {{"B", "2"}}, "./b", {"argB", "x"}}};
  launcher::wire::JobRequest request{"L-3", {1000, 1000, {}, "alice"}, {{"A", "harvested"}}};
  launcher::Layout layout{5, 2, {0, 0, 0, 1, 1}};
  std::vector<launcher::wire::Peer> peers{{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}};
  auto msg = launcher::wire::launch_request(options, request, layout,
                                            launcher::wire::launch_nodes(peers, layout), 1, "");
  agent::LaunchDefaults defaults;
  defaults.node_id = "n2";
  auto spec = agent::decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses(),
                                           defaults);
  REQUIRE_MESSAGE(spec, spec.error().message);
  REQUIRE(spec->apps.size() == 2);
  CHECK(spec->apps[0].entrypoint == "./a");
  CHECK(spec->apps[0].args == std::vector<std::string>{"argA"});
  CHECK(spec->apps[0].first_rank == 0);
  CHECK(spec->apps[0].size == 2);
  CHECK(spec->apps[1].entrypoint == "./b");
  CHECK(spec->apps[1].args == std::vector<std::string>{"argB", "x"});
  CHECK(spec->apps[1].first_rank == 2);
  CHECK(spec->apps[1].size == 3);
  // --env is per app and travels with it; the harvested environment is the launch's.
  CHECK(spec->env == std::vector<std::pair<std::string, std::string>>{{"A", "harvested"}});
  CHECK(spec->apps[0].env == std::vector<std::pair<std::string, std::string>>{{"A", "1"}});
  CHECK(spec->apps[1].env == std::vector<std::pair<std::string, std::string>>{{"B", "2"}});
  CHECK(spec->app_of(0) == 0);
  CHECK(spec->app_of(1) == 0);
  CHECK(spec->app_of(2) == 1);
  CHECK(spec->app_of(4) == 1);
}
