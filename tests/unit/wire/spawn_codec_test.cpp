// PMIx_Spawn between agents and the launcher: the request and its answer round-trip, and what
// is beyond the bounds, or names no program or no process, is refused when decoded.
#include "wire/spawn_codec.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::wire;

namespace {

SpawnRequest two_apps() {
  SpawnRequest r;
  r.launch_id = "L-1";
  r.rank = 3;
  r.apps.push_back(Application{"/bin/child", {"a", "b"}, {{"K", "V"}}, 2});
  r.apps.push_back(Application{"/bin/other", {}, {}, 1});
  r.workdir = "/scratch";
  r.hosts = {"n1", "n2"};
  r.hostfiles = {"/home/u/hosts"};
  return r;
}

Result<SpawnRequest> round_trip(const SpawnRequest& r) {
  return decode_spawn(spawn_request(r).envelope().asReader().getBody().getPmixSpawn());
}

}  // namespace

TEST_CASE("a spawn request reads back field for field") {
  auto got = round_trip(two_apps());
  REQUIRE(got);
  CHECK(got->launch_id == "L-1");
  CHECK(got->rank == 3);
  REQUIRE(got->apps.size() == 2);
  CHECK(got->apps[0].entrypoint == "/bin/child");
  CHECK(got->apps[0].args == std::vector<std::string>{"a", "b"});
  CHECK(got->apps[0].env == EnvList{{"K", "V"}});
  CHECK(got->apps[0].size == 2);
  CHECK(got->apps[1].size == 1);
  CHECK(got->workdir == "/scratch");
  CHECK(got->hosts == std::vector<std::string>{"n1", "n2"});
  CHECK(got->hostfiles == std::vector<std::string>{"/home/u/hosts"});
}

TEST_CASE("a spawn of nothing, of no program or no process, or beyond the bounds is refused") {
  SpawnRequest none = two_apps();
  none.apps.clear();
  CHECK_FALSE(round_trip(none));
  SpawnRequest no_program = two_apps();
  no_program.apps[1].entrypoint.clear();
  CHECK_FALSE(round_trip(no_program));
  SpawnRequest no_process = two_apps();
  no_process.apps[0].size = 0;
  CHECK_FALSE(round_trip(no_process));
  SpawnRequest many = two_apps();
  many.apps[0].size = kMaxSpawnProcs;  // with the other app's one, one too many
  auto refused = round_trip(many);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("at most") != std::string::npos);
  SpawnRequest apps = two_apps();
  apps.apps.resize(kMaxSpawnApps + 1, Application{"/bin/x", {}, {}, 1});
  CHECK_FALSE(round_trip(apps));
  SpawnRequest empty_path = two_apps();
  empty_path.hostfiles = {""};
  CHECK_FALSE(round_trip(empty_path));
  SpawnRequest long_path = two_apps();
  long_path.hostfiles = {std::string(kMaxSpawnPath + 1, 'h')};
  CHECK_FALSE(round_trip(long_path));
  SpawnRequest files = two_apps();
  files.hostfiles.assign(kMaxSpawnApps + 1, "/h");
  CHECK_FALSE(round_trip(files));
}

TEST_CASE("a spawn answer: the children's launch and nodes, the error, or a wrong response") {
  auto got = decode_spawn_answer(spawn_answer({"L-child", {1, 1, 0}}).envelope().asReader());
  REQUIRE(got);
  CHECK(got->launch_id == "L-child");
  CHECK(got->rank_nodes == std::vector<uint32_t>{1, 1, 0});
  Result<schema::Envelope::Reader> refused = make_error("no free nodes", ErrorKind::refused);
  auto error = decode_spawn_answer(refused);
  REQUIRE_FALSE(error);
  CHECK(error.error().message == "no free nodes");
  CHECK_FALSE(decode_spawn_answer(spawn_answer({"", {0}}).envelope().asReader()));
  SpawnedLaunch huge{"L-child", std::vector<uint32_t>(kMaxSpawnProcs + 1, 0)};
  CHECK_FALSE(decode_spawn_answer(spawn_answer(huge).envelope().asReader()));
}

TEST_CASE("the head's word on a spawned launch: its layout, bounded, never empty") {
  auto decode = [](const FamilyNotice& n) {
    auto msg = family_notice(n);
    return decode_family_notice(msg.envelope().asReader().getBody().getPmixFamily());
  };
  auto got = decode({"L-parent", {"L-child", {0, 2}}});
  REQUIRE(got);
  CHECK(got->launch_id == "L-parent");
  CHECK(got->child.launch_id == "L-child");
  CHECK(got->child.rank_nodes == std::vector<uint32_t>{0, 2});
  CHECK_FALSE(decode({"L-parent", {"L-child", {}}}));
  CHECK_FALSE(decode({"L-parent", {"", {0}}}));
  CHECK_FALSE(decode({"L-parent", {"L-child", std::vector<uint32_t>(kMaxSpawnProcs + 1, 0)}}));
}
