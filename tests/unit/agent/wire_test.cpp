// The two sides of the schema agree: what the launcher's wire module writes, the agent's reads
// back field for field, and the other way round (structured stragglers included).
#include "agent/wire.hpp"

#include <doctest/doctest.h>

#include "../fence/kv_views.hpp"
#include "agent/launch_spec.hpp"
#include "launcher/wire.hpp"
#include "rpc/session.hpp"
#include "wire/failure_codec.hpp"

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
  auto accepted = agent::wire::launch_accepted("n1", {}, 5, spec->env_left_out);
  CHECK(launcher::wire::accepted_env_left_out(
            accepted.envelope().asReader().getBody().getLaunchAccepted()) ==
        std::vector<std::string>{"BASH_ENV"});

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

TEST_CASE("a LaunchEnded with stragglers reads back as structured stragglers, and its strays") {
  agent::LaunchTimes times{10, 20, 30, 40, 50, {}};
  std::vector<agent::Straggler> late{{4, "initialized", "put", 1534}, {2, "waiting", "", 0}};
  auto msg = agent::wire::launch_ended(
      "L-2", 3, {agent::Failure{"fence 1 timed out", 1, -1, 1, "n2"}, late, times, 2});
  auto end =
      launcher::wire::decode_ended(msg.envelope().asReader().getBody().getLaunchEnded(), "n4");
  REQUIRE(end.failure);
  CHECK(policy::describe(*end.failure) == "fence 1 timed out");
  CHECK(end.failure->rank == -1);
  CHECK(end.failure->node == "n2");
  CHECK(end.times.exited_us == 40);
  CHECK(end.times.user_known_us == 50);
  CHECK(end.strays == 2);
  REQUIRE(end.stragglers.size() == 2);
  CHECK(end.stragglers[0].node == "n4");
  CHECK(launcher::format_stragglers(end.stragglers) ==
        "lattice: straggler report: ranks that never entered the fence:\n"
        "lattice:   rank 2 on n4: waiting, no PMI command yet\n"
        "lattice:   rank 4 on n4: initialized, last PMI command 'put' 1.5 s ago\n");

  auto clean = agent::wire::launch_ended("L-2", 0, {std::nullopt, {}, times});
  CHECK(!launcher::wire::decode_ended(clean.envelope().asReader().getBody().getLaunchEnded(), "n1")
             .failure);
}

TEST_CASE("fence phases: the agent keeps its latest 64, the launcher no more than 64 of any list") {
  agent::LaunchTimes times;
  for (uint64_t e = 1; e <= 100; ++e)
    for (auto phase : {agent::FencePhase::entered, agent::FencePhase::released})
      times.fences.record(e, phase, e * 1000);
  REQUIRE(times.fences.fences().size() == agent::FencePhaseLog::kKept);
  auto msg = agent::wire::launch_ended("L-4", 0, {std::nullopt, {}, times});
  auto end =
      launcher::wire::decode_ended(msg.envelope().asReader().getBody().getLaunchEnded(), "n1");
  REQUIRE(end.times.fences.size() == 64);
  CHECK(end.times.fences.front().epoch == 37);  // the oldest kept
  CHECK(end.times.fences.back().released_us == 100000);

  // A hostile agent's longer list costs the launcher what it keeps, not what was sent.
  rpc::Outgoing hostile;
  auto ended = hostile.envelope().initBody().initLaunchEnded();
  ended.setLaunchId("L-4");
  auto list = ended.initTimings().initFences(5000);
  for (unsigned i = 0; i < list.size(); ++i) list[i].setEpoch(i + 1);
  auto kept =
      launcher::wire::decode_ended(hostile.envelope().asReader().getBody().getLaunchEnded(), "n1");
  CHECK(kept.times.fences.size() == launcher::wire::kMaxFencesReported);
}

TEST_CASE("aborts: the launcher's and a head's read back the same way") {
  auto from_launcher =
      lattice::wire::abort_message("L-3", launcher::JobFailure{"interrupted by the user", 130});
  auto failure = lattice::wire::decode_abort(
      from_launcher.envelope().asReader().getBody().getAbortProcesses());
  CHECK(policy::describe(failure) == "interrupted by the user");
  CHECK(failure.fence_epoch == 0);
  CHECK(failure.exit_code == 130);
  CHECK(failure.rank == -1);
  auto from_head =
      lattice::wire::abort_message("L-3", agent::Failure{"fence 2 timed out", 1, -1, 2});
  CHECK(lattice::wire::decode_abort(from_head.envelope().asReader().getBody().getAbortProcesses())
            .fence_epoch == 2);
  // A relayed failure keeps what it was where it happened, field by field, and reads the same.
  agent::Failure exited;
  exited.kind = policy::FailureKind::exited;
  exited.exit_code = 137;
  exited.signal = 9;
  exited.rank = 5;
  exited.node = "n3";
  auto relayed = lattice::wire::abort_message("L-3", exited);
  auto got =
      lattice::wire::decode_abort(relayed.envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.kind == policy::FailureKind::exited);
  CHECK(got.exit_code == 137);
  CHECK(got.signal == 9);
  CHECK(got.rank == 5);
  CHECK(got.node == "n3");
  CHECK(policy::describe(got) == "rank 5 on n3 killed by signal 9 (SIGKILL)");
}

TEST_CASE("fence chunks up and down, with an error, read back") {
  const fence::KvList entries{{"k", "v"}, {"key-2", std::string(300, 'x')}, {"e", ""}};
  fence::Chunk chunk = fence::test::chunk_of(entries, 7, 1, 3);
  auto up = agent::wire::fence_chunk("L-4", 5, false, chunk, "");
  auto got = agent::wire::decode_fence_up(up.envelope().asReader().getBody().getPmiFence());
  REQUIRE(got.ok());
  CHECK(got->launch_id == "L-4");
  CHECK(got->from == 5);
  CHECK(!got->down);
  CHECK(got->chunk.epoch == 7);
  CHECK(got->chunk.index == 1);
  CHECK(got->chunk.count == 3);
  CHECK(got->chunk.keys == 3);
  CHECK(fence::test::entries_of(got->chunk) == entries);
  fence::Chunk empty;
  empty.epoch = 7;
  auto down = agent::wire::fence_chunk("L-4", 0, true, empty, "broken");
  auto failed =
      agent::wire::decode_fence_down(down.envelope().asReader().getBody().getPmiFenceComplete());
  REQUIRE(failed.ok());
  CHECK(failed->down);
  CHECK(failed->error == "broken");
  CHECK(failed->chunk.entries->empty());
  CHECK(failed->chunk.keys == 0);
}

TEST_CASE("a fence chunk whose packed entries run past their end is an error, named") {
  rpc::Outgoing msg;
  auto f = msg.envelope().initBody().initPmiFence();
  f.setLaunchId("L-4");
  f.setFromNode(3);
  const std::string packed =
      "\x01k\x01v\x05"
      "abc";  // the second key claims 5 bytes, has 3
  f.setEntries(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(packed.data()), packed.size()));
  auto got = agent::wire::decode_fence_up(msg.envelope().asReader().getBody().getPmiFence());
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().message ==
        "a fence chunk from node 3 for launch L-4 is malformed: packed fence entries: entry 1 at "
        "byte 4 has a length that is overlong or runs past the end (8 bytes)");
}

TEST_CASE("a full fence chunk is one segment, so its reader takes no lock per key") {
  // Keys and values of every length around a word boundary, filled to the chunk limit.
  fence::KvList store;
  size_t bytes = 0;
  for (size_t i = 0; bytes < fence::kDefaultChunkBytes; ++i) {
    store.emplace_back("key-" + std::to_string(i) + std::string(i % 9, 'k'),
                       std::string(40 + i % 17, 'v'));
    bytes += store.back().first.size() + store.back().second.size();
  }
  auto chunks = fence::make_chunks(3, fence::test::views(store), fence::kDefaultChunkBytes);
  REQUIRE(chunks.size() == 2);
  const std::string long_error(300, 'e');
  for (const auto& chunk : chunks)
    for (bool down : {false, true}) {
      auto msg = agent::wire::fence_chunk("0b8f6a52-3c1e-4d2a-9f3b-6a1c2d3e4f50", 12, down, chunk,
                                          down ? long_error : "");
      CHECK(msg.message().getSegmentsForOutput().size() == 1);
      auto body = msg.envelope().asReader().getBody();
      auto got = down ? agent::wire::decode_fence_down(body.getPmiFenceComplete())
                      : agent::wire::decode_fence_up(body.getPmiFence());
      REQUIRE(got.ok());
      CHECK(*got->chunk.entries == *chunk.entries);
      CHECK(got->chunk.keys == chunk.keys);
    }
}

TEST_CASE("a hostile failure: an unknown kind reads as its detail, exit code 0 as 1") {
  rpc::Outgoing msg;
  auto abort = msg.envelope().initBody().initAbortProcesses();
  auto f = abort.initFailure();
  f.setKind(static_cast<schema::FailureKind>(999));
  f.setDetail("from a newer peer");
  f.setExitCode(0);
  auto got = lattice::wire::decode_abort(msg.envelope().asReader().getBody().getAbortProcesses());
  CHECK(got.kind == policy::FailureKind::other);
  CHECK(policy::describe(got) == "from a newer peer");
  CHECK(got.exit_code == 1);  // a failure never reports success
}
