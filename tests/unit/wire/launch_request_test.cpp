// The launch request round-trips field for field; the seed's form (what lattice-api sends)
// reads as it is; what no agent could take is refused as an error value.
#include "wire/launch_request.hpp"

#include <doctest/doctest.h>

#include <cstring>

#include "rpc/session.hpp"

using namespace lattice;
using namespace lattice::wire;

namespace {

Result<LaunchRequest> round_trip(const LaunchRequest& sent) {
  auto msg = launch_request(sent);
  return decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
}

LaunchRequest every_field() {
  LaunchRequest r;
  r.launch_id = "L-1";
  r.allocation_id = "A-1";
  r.entrypoint = "/bin/echo";
  r.args = {"a", "b c"};
  r.tasks_per_node = 2;
  r.first_rank = 2;
  r.world_size = 6;
  r.env = {{"FOO", "1"}};
  r.pmi = PmiMode::pmix;
  auto key = std::make_shared<secure::Secret>(3);
  std::memcpy(key->data(), "\x01\xfe\x00", 3);
  r.cxi.emplace(CxiKey{11, 12, key});
  r.peers = {{"n1", "10.0.0.1", 7400}, {"n2", "10.0.0.2", 7401}};
  r.head_node_index = 1;
  r.node_index = 1;
  r.rank_nodes = {0, 0, 1, 1, 0, 1};
  r.fence_timeout_ms = 1500;
  r.slurm_compat = true;
  r.workdir = "/home/alice";
  r.fanout = 4;
  r.use_pmi_port = true;
  r.user = JobUser{1000, 100, std::vector<uint32_t>{100, 27}, "alice"};
  r.time_limit_ms = 90000;
  r.kill_on_bad_exit = false;
  r.unbuffered = true;
  r.warn_signal = 10;
  r.warn_before_ms = 30000;
  r.harvested = {{"HOME", "/home/alice"}};
  r.vendor = std::string("\x00pmix", 5);
  r.input_rank = -1;
  r.cpu_bind = proc::CpuBind{proc::CpuBind::Kind::map_cpu, {3, 1}, {}};
  r.cpus_per_task = 3;
  r.gpus.per_task = 2;
  r.gpus.bind = proc::GpuRequest::Bind::closest;
  r.apps = {Application{"./a", {"x"}, {{"A", "1"}}, 2}, Application{"./b", {}, {}, 4}};
  r.peer_list = PeerList{"n[1-2]", "10.0.0.[1-2]", {7400}};
  r.rank_layout = RankLayout{true, {NodeBlock{2, 3}}};
  r.scheduling = RankScheduling::normal;
  r.relayed = true;
  r.launcher_name = "launcher-alice";
  r.umask = 027;
  r.limits = {proc::Limit{proc::Resource::nofile, 4096}, proc::Limit{proc::Resource::core, 0}};
  r.spawned_by = SpawnParent{"C-1", 3, "L-0"};
  return r;
}

}  // namespace

TEST_CASE("a launch request with every field set reads back field for field") {
  const LaunchRequest sent = every_field();
  auto got = round_trip(sent);
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->launch_id == sent.launch_id);
  CHECK(got->allocation_id == sent.allocation_id);
  CHECK(got->entrypoint == sent.entrypoint);
  CHECK(got->args == sent.args);
  CHECK(got->tasks_per_node == 2);
  CHECK(got->first_rank == 2);
  CHECK(got->world_size == 6);
  CHECK(got->env == sent.env);
  CHECK(got->pmi == PmiMode::pmix);
  REQUIRE(got->cxi);
  CHECK(got->cxi->vni == 11);
  CHECK(got->cxi->svc_id == 12);
  REQUIRE(got->cxi->auth_key->size() == 3);
  CHECK(std::memcmp(got->cxi->auth_key->data(), "\x01\xfe\x00", 3) == 0);
  REQUIRE(got->peers.size() == 2);
  CHECK(got->peers[1].node_id == "n2");
  CHECK(got->peers[1].host == "10.0.0.2");
  CHECK(got->peers[1].port == 7401);
  CHECK(got->head_node_index == 1);
  CHECK(got->node_index == 1);
  CHECK(got->rank_nodes == sent.rank_nodes);
  CHECK(got->fence_timeout_ms == 1500);
  CHECK(got->slurm_compat);
  CHECK(got->workdir == "/home/alice");
  CHECK(got->fanout == 4);
  CHECK(got->use_pmi_port);
  REQUIRE(got->user);
  CHECK(got->user->uid == 1000);
  CHECK(got->user->gid == 100);
  CHECK(got->user->groups == sent.user->groups);
  CHECK(got->user->name == "alice");
  CHECK(got->time_limit_ms == 90000);
  CHECK_FALSE(got->kill_on_bad_exit);
  CHECK(got->unbuffered);
  CHECK(got->warn_signal == 10);
  CHECK(got->warn_before_ms == 30000);
  CHECK(got->harvested == sent.harvested);
  CHECK(got->vendor == sent.vendor);
  CHECK(got->input_rank == -1);
  CHECK(got->cpu_bind.kind == proc::CpuBind::Kind::map_cpu);
  CHECK(got->cpu_bind.map == std::vector<int>{3, 1});
  CHECK(got->cpus_per_task == 3);
  CHECK(got->gpus.per_task == 2);
  CHECK(got->gpus.per_node == 0);
  CHECK(got->gpus.bind == proc::GpuRequest::Bind::closest);
  REQUIRE(got->apps.size() == 2);
  CHECK(got->apps[0].entrypoint == "./a");
  CHECK(got->apps[0].args == std::vector<std::string>{"x"});
  CHECK(got->apps[0].env == EnvList{{"A", "1"}});
  CHECK(got->apps[1].size == 4);
  REQUIRE(got->peer_list);
  CHECK(got->peer_list->node_ids == "n[1-2]");
  CHECK(got->peer_list->hosts == "10.0.0.[1-2]");
  CHECK(got->peer_list->ports == std::vector<uint16_t>{7400});
  REQUIRE(got->rank_layout);
  CHECK(got->rank_layout->cyclic);
  REQUIRE(got->rank_layout->blocks.size() == 1);
  CHECK(got->rank_layout->blocks[0].nodes == 2);
  CHECK(got->rank_layout->blocks[0].ranks_each == 3);
  CHECK(got->scheduling == RankScheduling::normal);
  CHECK(got->relayed);
  CHECK(got->launcher_name == "launcher-alice");
  CHECK(got->umask == 027u);
  REQUIRE(got->limits.size() == 2);
  CHECK(got->limits[0].resource == proc::Resource::nofile);
  CHECK(got->limits[0].soft == 4096);
  CHECK(got->limits[1].resource == proc::Resource::core);
  REQUIRE(got->spawned_by);
  CHECK(got->spawned_by->launch_id == "C-1");
  CHECK(got->spawned_by->rank == 3);
  CHECK(got->spawned_by->family_id() == "L-0");
}

TEST_CASE("a first generation's family is its parent, whether or not the sender says so") {
  LaunchRequest sent = every_field();
  sent.spawned_by = SpawnParent{"P-1", 0, ""};
  auto got = round_trip(sent);
  REQUIRE_MESSAGE(got, got.error().message);
  REQUIRE(got->spawned_by);
  CHECK(got->spawned_by->family_id() == "P-1");
}

TEST_CASE("every CPU binding kind travels as itself") {
  using Kind = proc::CpuBind::Kind;
  for (auto kind : {Kind::none, Kind::cores, Kind::sockets, Kind::threads, Kind::ldoms}) {
    LaunchRequest r;
    r.cpu_bind.kind = kind;
    auto got = round_trip(r);
    REQUIRE(got);
    CHECK(got->cpu_bind.kind == kind);
    CHECK(got->cpu_bind.map.empty());
  }
  LaunchRequest r;
  r.cpu_bind = proc::CpuBind{Kind::mask_cpu, {}, {{0, 1}, {6, 7, 1000}}};
  auto got = round_trip(r);
  REQUIRE(got);
  CHECK(got->cpu_bind.kind == Kind::mask_cpu);
  CHECK(got->cpu_bind.masks == r.cpu_bind.masks);
}

TEST_CASE("every GPU request travels as itself; none asked for is no GpuRequest at all") {
  using Bind = proc::GpuRequest::Bind;
  LaunchRequest r;
  r.gpus.per_node = 4;
  r.gpus.bind = Bind::none;
  auto got = round_trip(r);
  REQUIRE(got);
  CHECK(got->gpus.per_node == 4);
  CHECK(got->gpus.bind == Bind::none);
  r.gpus = proc::GpuRequest{};
  r.gpus.bind = Bind::map_gpu;
  r.gpus.map = {3, 0};
  got = round_trip(r);
  REQUIRE(got);
  CHECK(got->gpus.bind == Bind::map_gpu);
  CHECK(got->gpus.map == std::vector<int>{3, 0});
  auto none = launch_request(LaunchRequest{});
  CHECK_FALSE(none.envelope().asReader().getBody().getLaunchProcesses().hasGpus());
}

TEST_CASE("the seed's form reads back as it was sent: no user, groups, inheritance or key") {
  rpc::Outgoing msg;
  auto r = msg.envelope().initBody().initLaunchProcesses();
  r.setLaunchId("api-1");
  r.setEntrypoint("/bin/true");
  r.setTasksPerNode(2);
  r.setFirstRank(2);
  r.setWorldSize(4);
  r.setHeadNodeIndex(0);
  auto peers = r.initPeers(2);
  peers[0].setNodeId("a");
  peers[1].setNodeId("b");
  auto got = decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
  REQUIRE_MESSAGE(got, got.error().message);
  CHECK(got->tasks_per_node == 2);
  CHECK(got->first_rank == 2);
  CHECK(got->peers.size() == 2);
  CHECK(got->rank_nodes.empty());
  CHECK_FALSE(got->rank_layout);
  CHECK_FALSE(got->peer_list);
  CHECK_FALSE(got->user);
  CHECK_FALSE(got->umask);
  CHECK_FALSE(got->cxi);
  CHECK(got->cpu_bind.kind == proc::CpuBind::Kind::none);
  CHECK(got->scheduling == RankScheduling::automatic);
  CHECK(got->kill_on_bad_exit);  // the schema's default
}

TEST_CASE("what no agent could take is refused with the reason, before it is copied") {
  auto refused = [](auto set, const std::string& why) {
    rpc::Outgoing msg;
    auto r = msg.envelope().initBody().initLaunchProcesses();
    r.setWorldSize(2);
    set(r);
    auto got = decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
    REQUIRE_FALSE(got);
    CHECK_MESSAGE(got.error().message.find(why) != std::string::npos, got.error().message);
  };
  using B = schema::LaunchProcessesRequest::Builder;
  refused([](B r) { r.initPeers(4); }, "peers: 4 nodes for a world of 2 ranks");
  refused([](B r) { r.initApps(100000); }, "100000 apps for 2 ranks");
  refused([](B r) { r.initCxiCredentials().initAuthKey(kMaxCxiKeyBytes + 1); },
          "a CXI auth key of 257 bytes");
  refused([](B r) { r.initCpuBind().setKind(static_cast<schema::CpuBindKind>(9)); },
          "a binding of kind 9 is unknown");
  refused([](B r) { r.initCpuBind().setKind(schema::CpuBindKind::MAP_CPU); },
          "map_cpu without CPUs");
  refused(
      [](B r) {
        auto bind = r.initCpuBind();
        bind.setKind(schema::CpuBindKind::MAP_CPU);
        bind.initCpus(1).set(0, 1024);
      },
      "1024 in map_cpu is not a CPU number");
  refused([](B r) { r.initCpuBind().setKind(schema::CpuBindKind::MASK_CPU); },
          "mask_cpu without masks");
  refused(
      [](B r) {
        auto bind = r.initCpuBind();
        bind.setKind(schema::CpuBindKind::MASK_CPU);
        bind.initMasks(2).init(0, 1).set(0, 1);
      },
      "a mask without CPUs");
  refused(
      [](B r) {
        auto bind = r.initCpuBind();
        bind.setKind(schema::CpuBindKind::MASK_CPU);
        bind.initMasks(1).init(0, 1).set(0, 5000);
      },
      "5000 in a mask is not a CPU number");
  refused([](B r) { r.setCpusPerTask(1025); }, "cpusPerTask: 1025 (at most 1024)");
  refused([](B r) { r.initGpus().setPerTask(257); }, "gpus: 257 GPUs on a node (at most 256)");
  refused([](B r) { r.initGpus().setBind(static_cast<schema::GpuBindKind>(4)); },
          "gpus: a binding of kind 4 is unknown");
  refused(
      [](B r) {
        auto gpus = r.initGpus();
        gpus.setPerTask(1);
        gpus.setPerNode(1);
      },
      "gpus: give --gpus-per-task or --gpus-per-node, not both");
  refused([](B r) { r.initGpus().setBind(schema::GpuBindKind::MAP_GPU); },
          "gpus: --gpu-bind: map_gpu names no GPU");
  refused(
      [](B r) {
        auto gpus = r.initGpus();
        gpus.setBind(schema::GpuBindKind::MAP_GPU);
        gpus.initMap(1).set(0, 300);
      },
      "gpus: 300 in map_gpu is not a GPU number");
}

TEST_CASE("an inherited limit this side does not know is left out, the others kept") {
  rpc::Outgoing msg;
  auto r = msg.envelope().initBody().initLaunchProcesses();
  auto limits = r.initInherit().initLimits(2);
  limits[0].setResource(static_cast<schema::Resource>(200));
  limits[1].setResource(schema::Resource::STACK);
  limits[1].setSoft(8192);
  auto got = decode_launch_request(msg.envelope().asReader().getBody().getLaunchProcesses());
  REQUIRE(got);
  REQUIRE(got->limits.size() == 1);
  CHECK(got->limits[0].resource == proc::Resource::stack);
  CHECK(got->limits[0].soft == 8192);
}

TEST_CASE("a relayed copy is the request addressed to the child, its key kept") {
  auto original = launch_request(every_field());
  auto copy = relayed_request(original.envelope().asReader().getBody().getLaunchProcesses(), 0);
  auto got = decode_launch_request(copy.envelope().asReader().getBody().getLaunchProcesses());
  REQUIRE(got);
  CHECK(got->node_index == 0);
  CHECK(got->launch_id == "L-1");
  REQUIRE(got->cxi);
  CHECK(got->cxi->auth_key->size() == 3);
}
