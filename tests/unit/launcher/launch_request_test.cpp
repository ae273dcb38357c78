// What the launcher puts in every node's launch request: its options, the job's user and
// environment, and the nodes and layout in their compact forms when they have them.
#include "launcher/launch_request.hpp"

#include <doctest/doctest.h>

#include "rpc/session.hpp"

using namespace lattice;
using namespace lattice::launcher;

TEST_CASE("one app travels in the seed's fields, with the options and the job's user") {
  LaunchOptions options;
  options.apps = {App{0, {{"BAR", "new"}}, "/bin/echo", {"a", "b c"}}};
  options.fence_timeout_ms = 1500;
  options.fanout = 4;
  options.pmi_port = true;
  options.sched = "batch";
  options.cpu_bind = *proc::parse_cpu_bind("map_cpu:3,1");
  // --export NAME=VALUE items lie under the app's --env; what --export harvested travels apart.
  JobRequest request{"L-1",
                     {1000, 1000, {1000, 27}, "alice"},
                     {{"FOO", "bar"}, {"BAR", "old"}},
                     {{"BAR", "assigned"}, {"BAZ", "assigned"}}};
  Layout layout{3, 2, {0, 0, 1}};
  std::vector<wire::PeerInfo> peers{{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}};
  auto req = launch_request(options, request, layout, peers, "/home/alice");
  CHECK(req.launch_id == "L-1");
  CHECK(req.allocation_id.empty());  // not in an allocation
  CHECK(req.entrypoint == "/bin/echo");
  CHECK(req.args == std::vector<std::string>{"a", "b c"});
  CHECK(req.apps.empty());
  CHECK(req.world_size == 3);
  CHECK(req.head_node_index == 0);
  CHECK(req.env == wire::EnvList{{"BAR", "new"}, {"BAZ", "assigned"}});
  CHECK(req.harvested == wire::EnvList{{"FOO", "bar"}, {"BAR", "old"}});
  CHECK(req.fence_timeout_ms == 1500);
  CHECK(req.fanout == 4);
  CHECK(req.use_pmi_port);
  CHECK(req.scheduling == wire::RankScheduling::batch);
  CHECK(req.cpu_bind.kind == proc::CpuBind::Kind::map_cpu);
  CHECK(req.cpu_bind.map == std::vector<int>{3, 1});
  CHECK(req.workdir == "/home/alice");
  REQUIRE(req.user);
  CHECK(req.user->name == "alice");
  CHECK(req.user->groups == std::vector<uint32_t>{1000, 27});
  CHECK(req.umask == 022u);
  CHECK_FALSE(req.cxi);
  // Names and ports a host list holds travel as one; two ports, one per node.
  REQUIRE(req.peer_list);
  CHECK(req.peers.empty());
  CHECK(req.peer_list->node_ids == "n[1-2]");
  CHECK(req.peer_list->ports == std::vector<uint16_t>{7400, 7401});
  REQUIRE(req.rank_layout);
  CHECK(req.rank_nodes.empty());
}

TEST_CASE("MPMD apps travel as apps, each with its ranks, args and own env") {
  LaunchOptions options;
  options.apps = {App{2, {{"A", "1"}}, "./a", {"argA"}}, App{3, {{"B", "2"}}, "./b", {"x"}}};
  JobRequest request{"L-3", {1000, 1000, {}, "alice"}, {{"A", "harvested"}}, {{"C", "3"}}};
  Layout layout{5, 2, {0, 0, 0, 1, 1}};
  auto req = launch_request(options, request, layout, {{"n1", "h1", 7400}, {"n2", "h2", 7400}}, "");
  CHECK(req.entrypoint.empty());
  CHECK(req.args.empty());
  CHECK(req.env == wire::EnvList{{"C", "3"}});  // the launch's, under every app's
  REQUIRE(req.apps.size() == 2);
  CHECK(req.apps[0].entrypoint == "./a");
  CHECK(req.apps[0].size == 2);
  CHECK(req.apps[1].args == std::vector<std::string>{"x"});
  CHECK(req.apps[1].env == wire::EnvList{{"B", "2"}});
  CHECK(req.apps[1].size == 3);
}

namespace {

// The encoded size of node `index`'s request for `nodes` numbered nodes (n1.. at 10.1.X.Y),
// `per_node` ranks each, block or cyclic.
size_t request_bytes(int nodes, int per_node, bool cyclic, int index) {
  LaunchOptions options;
  options.apps = {App{0, {}, "/bin/true", {}}};
  JobRequest request{"L-9", {1000, 1000, {}, "alice"}, {}};
  Layout layout{nodes * per_node, nodes, {}};
  for (int r = 0; r < nodes * per_node; ++r)
    layout.rank_nodes.push_back(cyclic ? r % nodes : r / per_node);
  std::vector<wire::PeerInfo> peers;
  for (int n = 0; n < nodes; ++n)
    peers.push_back({cat("n", n + 1), cat("10.1.", n / 256, '.', n % 256), 7400});
  auto req = launch_request(options, request, layout, peers, "");
  req.node_index = static_cast<uint32_t>(index);
  auto msg = wire::launch_request(req);
  auto frame = rpc::encode_notification(msg);
  REQUIRE(frame);
  return frame->size();
}

}  // namespace

TEST_CASE("a launch request's size does not grow with the nodes when they are numbered") {
  const size_t small = request_bytes(16, 1, false, 3);
  // 16 host-list items of 256 addresses each against one: a few bytes per 256 nodes.
  CHECK(request_bytes(4096, 1, false, 4000) < small + 16 * 24);
  CHECK(request_bytes(64, 4, true, 5) < small + 32);
  CHECK(request_bytes(64, 4, false, 5) < small + 32);
}

TEST_CASE("names a host list cannot hold travel as the list itself") {
  LaunchOptions options;
  options.apps = {App{0, {}, "/bin/true", {}}};
  JobRequest request{"L-9", {1000, 1000, {}, "alice"}, {}};
  Layout layout{2, 2, {1, 0}};  // no rule for this layout either
  std::vector<wire::PeerInfo> odd{{"a[1]", "h1", 7400}, {"b", "h2", 7401}};
  auto req = launch_request(options, request, layout, odd, "");
  CHECK_FALSE(req.peer_list);
  REQUIRE(req.peers.size() == 2);
  CHECK(req.peers[0].node_id == "a[1]");
  CHECK(req.peers[1].port == 7401);
  CHECK_FALSE(req.rank_layout);
  CHECK(req.rank_nodes == std::vector<uint32_t>{1, 0});
  CHECK(req.head_node_index == 1);
}

TEST_CASE("-c binds each rank to its own CPUs unless --cpu-bind says otherwise; GPUs travel") {
  auto request_of = [](const std::vector<std::string>& args) {
    auto options = parse_launch_options(args);
    REQUIRE_MESSAGE(options, options.error().message);
    JobRequest job{"L-1", {1000, 1000, {1000}, "alice"}, {}, {}};
    Layout layout{1, 1, {0}};
    return launch_request(*options, job, layout, {{"n1", "10.0.0.1", 7400}}, "/");
  };
  auto req = request_of({"-c", "2", "prog"});
  CHECK(req.cpus_per_task == 2);
  CHECK(req.cpu_bind.kind == proc::CpuBind::Kind::threads);
  CHECK(request_of({"-c", "2", "--cpu-bind=none", "prog"}).cpu_bind.kind ==
        proc::CpuBind::Kind::none);
  CHECK(request_of({"-c", "2", "--cpu-bind=sockets", "prog"}).cpu_bind.kind ==
        proc::CpuBind::Kind::sockets);
  req = request_of({"prog"});
  CHECK(req.cpus_per_task == 0);
  CHECK(req.cpu_bind.kind == proc::CpuBind::Kind::none);
  CHECK_FALSE(req.gpus.any());
  req = request_of({"--gpus-per-task", "2", "--gpu-bind", "closest", "prog"});
  CHECK(req.gpus.per_task == 2);
  CHECK(req.gpus.bind == proc::GpuRequest::Bind::closest);
}

TEST_CASE("-J's name reaches the ranks as SLURM_JOB_NAME under --slurm-compat only") {
  LaunchOptions options;
  options.apps = {App{1, {}, "p", {}}};
  options.job_name = "relax";
  auto plain = job_request(options, JobUserInfo{1000, 1000, {}, "u"});
  REQUIRE(plain);
  auto named = [](const JobRequest& r) {
    for (const auto& [name, value] : r.assigned)
      if (name == "SLURM_JOB_NAME") return value;
    return std::string("(none)");
  };
  CHECK(named(*plain) == "(none)");
  options.slurm_compat = true;
  auto compat = job_request(options, JobUserInfo{1000, 1000, {}, "u"});
  REQUIRE(compat);
  CHECK(named(*compat) == "relax");
}
