#include "agent/launch_spec.hpp"

#include <capnp/message.h>
#include <doctest/doctest.h>

#include "pmix/app_setup_codec.hpp"

using namespace lattice;
using namespace lattice::agent;

namespace {
struct Request {
  capnp::MallocMessageBuilder message;
  schema::LaunchProcessesRequest::Builder r = message.initRoot<schema::LaunchProcessesRequest>();
  LaunchDefaults defaults;  // a root agent on n0
  Request() {
    r.setLaunchId("job-1");
    r.setEntrypoint("/bin/true");
    r.setWorldSize(4);
    r.setTasksPerNode(4);
    auto user = r.initUser();
    user.setUid(1000);
    user.setGid(1000);
    user.setName("alice");
    defaults.node_id = "n0";
  }
  Result<LaunchSpec> decode() {
    auto request = wire::decode_launch_request(r.asReader());
    if (!request) return request.error();
    return make_launch_spec(*request, defaults);
  }
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
  req.defaults.node_id = "b";
  auto nodes = req.r.initRankNodes(4);
  for (unsigned i = 0; i < 4; ++i) nodes.set(i, i % 2);
  auto spec = req.decode();
  REQUIRE(spec);
  CHECK(spec->local_ranks() == std::vector<int>{1, 3});
  CHECK(spec->peers.joined() == "a,b");

  Request block;
  auto p2 = block.r.initPeers(2);
  p2[0].setNodeId("a");
  p2[1].setNodeId("b");
  block.r.setTasksPerNode(2);
  block.r.setNodeIndex(1);
  block.defaults.node_id = "b";
  block.r.setFirstRank(1);  // should be 2
  CHECK_FALSE(block.decode());
  block.r.setFirstRank(2);
  auto ok = block.decode();
  REQUIRE(ok);
  CHECK(ok->local_ranks() == std::vector<int>{2, 3});
}

TEST_CASE("a PMIx request is decoded as one (whether this agent serves it is decided later)") {
  Request req;
  req.r.setPmiMode(schema::PmiMode::PMIX);
  auto spec = req.decode();
  REQUIRE(spec);
  CHECK(spec->pmi == wire::PmiMode::pmix);
  Request plain;
  CHECK(plain.decode()->pmi == wire::PmiMode::pmi);
  Request batch;  // an allocation's batch step
  batch.r.setPmiMode(schema::PmiMode::NONE);
  CHECK(batch.decode()->pmi == wire::PmiMode::none);
}

TEST_CASE("the harvested environment (RFC0029 setup data) lies under the explicit --env") {
  Request req;
  auto harvested = req.r.initAppSetup().initEnvironment(2);
  harvested[0].setName("OMP_NUM_THREADS");
  harvested[0].setValue("4");
  harvested[1].setName("HOME_APP");
  harvested[1].setValue("/apps");
  auto env = req.r.initEnv(1);
  env[0].setName("OMP_NUM_THREADS");
  env[0].setValue("8");
  auto spec = req.decode();
  REQUIRE(spec);
  CHECK(spec->env == std::vector<std::pair<std::string, std::string>>{{"HOME_APP", "/apps"},
                                                                      {"OMP_NUM_THREADS", "8"}});
}

TEST_CASE("inputRank: a rank, all (-1) or none (-2); anything else is refused") {
  for (int good : {0, -1, -2}) {
    Request req;
    req.r.setInputRank(good);
    auto spec = req.decode();
    REQUIRE(spec);
    CHECK(spec->gets_input(0) == (good != -2));
  }
  for (int bad : {-3, 1 << 30}) {
    Request req;
    req.r.setInputRank(bad);
    CHECK_FALSE(req.decode());
  }
}

TEST_CASE("setup data that cannot be applied is refused, not dropped") {
  Request reserved;
  auto harvested = reserved.r.initAppSetup().initEnvironment(1);
  harvested[0].setName("PMI_RANK");
  harvested[0].setValue("0");
  auto spec = reserved.decode();
  REQUIRE_FALSE(spec);
  CHECK(spec.error().message.find("PMI_RANK") != std::string::npos);
}

namespace {
std::string setup_error(Request& req, const std::string& bytes) {
  req.r.initAppSetup().setVendor(
      capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()));
  auto spec = req.decode();
  return spec ? "" : spec.error().message;
}
std::string set_envar(const std::string& name, const std::string& value) {
  return pmix::encode_app_setup({{"pmix.envar.set", {{name, value, ':'}}}});
}
}  // namespace

TEST_CASE("PMIx setup data (RFC0029): libpmix's settings for a PMIx launch, checked") {
  Request req;
  req.r.setPmiMode(schema::PmiMode::PMIX);
  CHECK(setup_error(req, set_envar("PMIX_MCA_ptl_base_verbose", "5")) == "");
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  REQUIRE(spec->pmix_setup.size() == 1);
  CHECK(spec->pmix_setup[0].envars[0].name == "PMIX_MCA_ptl_base_verbose");

  CHECK(setup_error(req, std::string("\1\2\3", 3)) ==
        "PMIx setup data in an unknown form (not Lattice's LPS1)");
  CHECK(setup_error(req, pmix::encode_app_setup({{"pmix.pnet.opa.blob", {}}})) ==
        "PMIx setup data under 'pmix.pnet.opa.blob', which Lattice does not carry");
  CHECK(setup_error(req, set_envar("PMIX_SERVER_URI", "x")) ==
        "PMIx setup data may set libpmix's settings (PMIX_MCA_*) only, not PMIX_SERVER_URI");
  CHECK(setup_error(req, set_envar("LD_PRELOAD", "x")) ==
        "PMIx setup data may set libpmix's settings (PMIX_MCA_*) only, not LD_PRELOAD");
  CHECK(setup_error(req, set_envar("PMIX_MCA_", "x")) ==
        "PMIx setup data may set libpmix's settings (PMIX_MCA_*) only, not PMIX_MCA_");
  // alice may load plugins into her own ranks; a root job may not be given the hook.
  CHECK(setup_error(req, set_envar("PMIX_MCA_mca_base_component_path", "/tmp/p")) == "");
  req.r.getUser().setUid(0);
  req.r.getUser().setName("root");
  req.defaults.allow_root_jobs = true;
  CHECK(setup_error(req, set_envar("PMIX_MCA_mca_base_component_path", "/tmp/p")) ==
        "PMIx setup data: environment variable PMIX_MCA_mca_base_component_path may not be set for "
        "a job running as root: a hook of OpenPMIx (an agent's security.allow_root_job_env may "
        "allow it)");

  Request pmi2;
  CHECK(setup_error(pmi2, set_envar("PMIX_MCA_a", "1")) ==
        "PMIx setup data (AppSetup.vendor) in a launch that is not --pmi pmix");
}

TEST_CASE("a relayed request names its fanout and its launcher") {
  Request req;
  req.r.setRelayed(true);
  auto no_fanout = req.decode();
  REQUIRE_FALSE(no_fanout);
  CHECK(no_fanout.error().message == "a relayed launch must name its fence fanout");
  req.r.setFanout(4);
  auto no_name = req.decode();
  REQUIRE_FALSE(no_name);
  CHECK(no_name.error().message == "a relayed launch must name its launcher (launcherName)");
  req.r.setLauncherName("lattice@h:1");
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->relayed);
  CHECK(spec->launcher_name == "lattice@h:1");
  CHECK(spec->fanout == 4);
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
  refused([](B r) { r.setWorldSize(0); }, "a world of 0 ranks");
  refused([](B r) { r.setEntrypoint(""); }, "entrypoint");
  refused([](B r) { r.setNodeIndex(3); }, "nodeIndex");
  refused([](B r) { r.initRankNodes(2); }, "rankNodes");
  refused([](B r) { r.initEnv(1)[0].setName("A=B"); }, "not valid");
  refused([](B r) { r.initEnv(1)[0].setName("PMI_RANK"); }, "reserved");
  refused([](B r) { r.initEnv(1)[0].setName("LATTICE_AGENT_PID"); }, "reserved");
  refused([](B r) { r.disownUser(); }, "names no user");
  refused([](B r) { r.setTasksPerNode(0); }, "tasksPerNode");
}

TEST_CASE("MPMD apps must cover the world in order, each with a program and clean env") {
  auto refused = [](auto mutate, const std::string& needle) {
    Request req;
    req.r.setEntrypoint("");
    auto apps = req.r.initApps(2);
    apps[0].setEntrypoint("/bin/true");
    apps[0].setSize(1);
    apps[1].setEntrypoint("/bin/false");
    apps[1].setSize(3);
    REQUIRE(req.decode());
    mutate(req.r);
    auto spec = req.decode();
    REQUIRE_FALSE(spec);
    CHECK_MESSAGE(spec.error().message.find(needle) != std::string::npos, spec.error().message);
  };
  using B = schema::LaunchProcessesRequest::Builder;
  refused([](B r) { r.getApps()[1].setSize(2); }, "the apps hold 3 ranks");
  refused([](B r) { r.getApps()[1].setSize(4); }, "app 1 has 4 ranks");
  refused([](B r) { r.getApps()[0].setSize(0); }, "app 0 has 0 ranks");
  refused([](B r) { r.getApps()[1].setEntrypoint(""); }, "app 1 has no entrypoint");
  refused([](B r) { r.getApps()[1].initEnv(1)[0].setName("PMI_RANK"); }, "reserved");
  refused([](B r) { r.setEntrypoint("/bin/true"); }, "leave entrypoint and args empty");
  refused([](B r) { r.initApps(5); }, "5 apps for 4 ranks");
}

TEST_CASE("whose jobs an agent runs: root agents any user's but root's unless allowed") {
  Request req;
  REQUIRE(req.decode());
  CHECK(req.decode()->user.name == "alice");
  CHECK_FALSE(req.decode()->user.groups);  // absent: the node's own view

  auto user = req.r.getUser();
  user.setUid(0);
  user.setGid(0);
  user.setName("root");
  auto refused = req.decode();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("does not run jobs as root") != std::string::npos);
  CHECK(refused.error().message.find("n0") != std::string::npos);
  req.defaults.allow_root_jobs = true;
  CHECK(req.decode());

  // Loader variables pass into user jobs, never into root jobs.
  req.r.initEnv(1)[0].setName("LD_PRELOAD");
  auto root_preload = req.decode();
  REQUIRE_FALSE(root_preload);
  CHECK(root_preload.error().message.find("LD_PRELOAD") != std::string::npos);
  user.setUid(1000);
  CHECK(req.decode());
}

TEST_CASE("a root job's hooks: refused when named, left out when harvested, unless allowed") {
  Request req;
  auto user = req.r.getUser();
  user.setUid(0);
  user.setGid(0);
  user.setName("root");
  req.defaults.allow_root_jobs = true;
  auto harvested = req.r.initAppSetup().initEnvironment(3);
  const char* names[] = {"BASH_ENV", "OMP_NUM_THREADS", "PYTHONPATH"};
  for (unsigned i = 0; i < 3; ++i) {
    harvested[i].setName(names[i]);
    harvested[i].setValue("/tmp/x");
  }
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->env_left_out == std::vector<std::string>{"BASH_ENV", "PYTHONPATH"});
  CHECK(spec->env ==
        std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "/tmp/x"}});

  auto named = req.r.initEnv(1);
  named[0].setName("PERL5LIB");
  named[0].setValue("/tmp/perl");
  auto refused = req.decode();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("PERL5LIB may not be set for a job running as root") !=
        std::string::npos);

  // An app's own variables are named too.
  req.r.initEnv(0);
  req.r.setEntrypoint("");
  auto apps = req.r.initApps(2);
  for (unsigned i = 0; i < 2; ++i) {
    apps[i].setEntrypoint("/bin/true");
    apps[i].setSize(2);
  }
  apps[1].initEnv(1)[0].setName("ENV");
  refused = req.decode();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("variable ENV may not be set") != std::string::npos);

  req.defaults.root_env_allowed = {"ENV", "BASH_*", "PYTHON*"};
  spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->env_left_out.empty());
  CHECK(spec->env.size() == 3);

  // A user's job keeps them all.
  req.defaults.root_env_allowed.clear();
  user.setUid(1000);
  user.setName("alice");
  spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->env_left_out.empty());
}

TEST_CASE("an agent not running as root runs only its own user's jobs") {
  Request req;
  req.defaults.agent_uid = 1000;
  CHECK(req.decode());
  req.r.getUser().setUid(1001);
  auto spec = req.decode();
  REQUIRE_FALSE(spec);
  CHECK(spec.error().message ==
        "agent on n0 runs as uid 1000 and cannot start a job for alice (uid 1001)");
}

TEST_CASE("limits: world size and ranks per node, refused with the limit's name") {
  Request req;
  req.r.setWorldSize(2000000);
  req.r.setTasksPerNode(2000000);
  auto big = req.decode();
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find("limits.max_world_size") != std::string::npos);
  req.defaults.max_world_size = 1 << 22;
  auto crowded = req.decode();
  REQUIRE_FALSE(crowded);
  CHECK(crowded.error().message.find("limits.max_ranks_per_node") != std::string::npos);
}

TEST_CASE("the request must address this agent by its own node id, once") {
  Request req;
  auto peers = req.r.initPeers(2);
  peers[0].setNodeId("n0");
  peers[1].setNodeId("n0");
  req.r.setTasksPerNode(2);
  auto twice = req.decode();
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("appears twice") != std::string::npos);
  peers[0].setNodeId("other");
  peers[1].setNodeId("n1");
  auto wrong = req.decode();
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("addresses this agent as node 'other'") != std::string::npos);
}

TEST_CASE("CXI credentials: the key kept as the hex ranks get, in guarded memory; bounded") {
  Request req;
  CHECK_FALSE(req.decode()->cxi);  // none: no CXI
  auto cxi = req.r.initCxiCredentials();
  cxi.setVni(9);
  cxi.setSvcId(3);
  CHECK_FALSE(req.decode()->cxi);  // an empty key is no credential either
  const uint8_t key[] = {0x00, 0xab, 0x7f};
  cxi.setAuthKey(capnp::Data::Reader(key, sizeof key));
  auto spec = req.decode();
  REQUIRE(spec);
  REQUIRE(spec->cxi);
  CHECK(spec->cxi->vni == 9);
  CHECK(spec->cxi->svc_id == 3);
  CHECK(std::string(reinterpret_cast<const char*>(spec->cxi->auth_key_hex.data())) == "00ab7f");
  std::vector<uint8_t> big(wire::kMaxCxiKeyBytes + 1, 1);
  cxi.setAuthKey(capnp::Data::Reader(big.data(), big.size()));
  auto refused = req.decode();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("CXI auth key") != std::string::npos);
}

TEST_CASE("a hostile compact peer list or rank layout is refused with the reason") {
  auto with_peers = [](const char* ids, const char* hosts, std::vector<uint16_t> ports) {
    Request req;
    req.r.setWorldSize(4);
    auto list = req.r.initPeerList();
    list.setNodeIds(ids);
    list.setHosts(hosts);
    auto p = list.initPorts(static_cast<unsigned>(ports.size()));
    for (unsigned i = 0; i < p.size(); ++i) p.set(i, ports[i]);
    req.r.setNodeIndex(0);
    req.r.setTasksPerNode(2);
    return req.decode();
  };
  auto ok = with_peers("n[0-1]", "10.0.0.[1-2]", {7400});
  REQUIRE_MESSAGE(ok, ok.error().message);
  CHECK(ok->peers[1].node_id == "n1");
  CHECK(ok->peers[1].host == "10.0.0.2");
  CHECK(ok->peers[1].port == 7400);
  // More nodes than ranks: refused before the list is expanded past the world size.
  auto many = with_peers("n[0-99999999]", "h", {1});
  REQUIRE(!many);
  CHECK(many.error().message.find("peerList.nodeIds") == 0);
  CHECK(!with_peers("n[0-1]", "h[1-3]", {1}));        // hosts and ids differ in number
  CHECK(!with_peers("n[0-1]", "h[1-2]", {1, 2, 3}));  // neither one port nor one per node
  CHECK(!with_peers("n[0-1", "h[1-2]", {1}));         // malformed
  CHECK(!with_peers("n0,n0", "h[1-2]", {1}));         // a node id twice

  Request req;
  req.r.setWorldSize(6);
  auto peers = req.r.initPeers(2);
  peers[0].setNodeId("n0");
  peers[1].setNodeId("n1");
  auto blocks = req.r.initRankLayout().initBlocks(2);
  blocks[0].setNodes(1);
  blocks[0].setRanksEach(4);
  blocks[1].setNodes(1);
  blocks[1].setRanksEach(2);
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->rank_nodes == std::vector<int>{0, 0, 0, 0, 1, 1});
  blocks[1].setRanksEach(3);  // 7 ranks for a world of 6
  CHECK(!req.decode());
  blocks[1].setNodes(4000000000u);  // far past the nodes: refused, not allocated
  CHECK(!req.decode());
  auto too_many = req.r.initRankLayout().initBlocks(3);  // more blocks than nodes: not copied
  for (unsigned b = 0; b < 3; ++b) {
    too_many[b].setNodes(1);
    too_many[b].setRanksEach(2);
  }
  auto refused = req.decode();
  REQUIRE(!refused);
  CHECK(refused.error().message.find("3 blocks for 2 nodes") != std::string::npos);
}

TEST_CASE("an explicit peer list of more nodes than ranks is refused before it is copied") {
  Request req;
  req.r.setWorldSize(2);
  req.r.setTasksPerNode(1);
  auto peers = req.r.initPeers(4);
  for (unsigned i = 0; i < peers.size(); ++i) peers[i].setNodeId("n" + std::to_string(i));
  auto refused = req.decode();
  REQUIRE(!refused);
  CHECK(
      refused.error().message ==
      "peers: 4 nodes for a world of 2 ranks (each node holds one at least, but a relaying head)");
  req.r.initPeers(3);
  for (unsigned i = 0; i < 3; ++i) req.r.getPeers()[i].setNodeId("n" + std::to_string(i));
  req.r.setWorldSize(3);  // one rank on each node
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->peers.size() == 3);
}

TEST_CASE("ranks run under SCHED_BATCH when asked, or (auto) on a node with more ranks than CPUs") {
  Request req;
  auto spec = req.decode();
  REQUIRE(spec);
  CHECK(spec->sched == RankScheduling::automatic);  // what an older launcher's request means
  CHECK(!spec->ranks_batch(4, 4));
  CHECK(spec->ranks_batch(5, 4));
  req.r.setRankScheduling(schema::RankScheduling::NORMAL);
  CHECK(!req.decode()->ranks_batch(64, 2));
  req.r.setRankScheduling(schema::RankScheduling::BATCH);
  CHECK(req.decode()->ranks_batch(1, 64));
  // A value this agent does not know (a newer launcher's, or a hostile one's) is auto.
  req.r.setRankScheduling(static_cast<schema::RankScheduling>(0x7fff));
  auto unknown = req.decode();
  REQUIRE(unknown);
  CHECK(unknown->sched == RankScheduling::automatic);
}

TEST_CASE(
    "a fanout no tree can have is refused, not an agent's abort (found by fuzz_launch_request)") {
  Request req;
  req.r.setFanout(0x80000000u);  // an int's INT_MIN: the tree's assertion ended the agent
  auto wide = req.decode();
  REQUIRE_FALSE(wide);
  CHECK(wide.error().message == "a fence fanout of 2147483648 (at most 65536)");
  req.r.setFanout(65536);
  auto spec = req.decode();
  REQUIRE_MESSAGE(spec, spec.error().message);
  CHECK(spec->fence_tree().fanout() == 1);  // one node: a fanout of at most n-1
}

TEST_CASE("only the head of a launch without PMI may hold no ranks (the user door's relay)") {
  // A command for node b, relayed by a, the door's node, which runs nothing itself.
  auto request = [](unsigned self, schema::PmiMode mode, unsigned head) {
    auto req = std::make_unique<Request>();
    req->r.setWorldSize(1);
    req->r.setTasksPerNode(0);
    auto peers = req->r.initPeers(2);
    peers[0].setNodeId("a");
    peers[1].setNodeId("b");
    req->r.initRankNodes(1).set(0, 1);
    req->r.setNodeIndex(self);
    req->r.setHeadNodeIndex(head);
    req->r.setPmiMode(mode);
    req->defaults.node_id = self ? "b" : "a";
    return req;
  };
  auto head = request(0, schema::PmiMode::NONE, 0)->decode();
  REQUIRE_MESSAGE(head, head.error().message);
  CHECK(head->local_ranks().empty());
  CHECK(request(1, schema::PmiMode::NONE, 0)->decode()->local_ranks() == std::vector<int>{0});
  auto with_pmi = request(0, schema::PmiMode::PMI2, 0)->decode();
  REQUIRE_FALSE(with_pmi);
  CHECK(with_pmi.error().message == "the layout gives node 0 no ranks");
  auto not_head = request(0, schema::PmiMode::NONE, 1)->decode();
  REQUIRE_FALSE(not_head);
  CHECK(not_head.error().message == "the layout gives node 0 no ranks");
}
