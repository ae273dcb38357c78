// job_info against the real libpmix (its regex encoders need an initialised library, so the
// test starts a server once): the layouts it refuses, the ranks it calls local, and the keys
// Open MPI's MPI_Init needs, per rank with local and node ranks.
#include "pmix/job_info.hpp"

#include <doctest/doctest.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "pmix/module.hpp"

namespace lattice::pmix {
namespace {

JobLayout two_nodes() {
  JobLayout l;
  l.nspace = "lattice.L1";
  l.jobid = "L1";
  l.nodes = {"n1", "n2"};
  l.rank_nodes = {0, 1, 0, 1, 1};  // cyclic, uneven
  l.this_node = 1;
  return l;
}

// libpmix, initialised once for the whole binary (one server per process).
struct Libpmix {
  std::string dir;
  std::unique_ptr<Server> server;
  ~Libpmix() {
    server.reset();
    std::filesystem::remove_all(dir);
  }
};

void ensure_libpmix() {
  static Libpmix lib;
  if (lib.server) return;
  const char* tmp = std::getenv("TMPDIR");
  lib.dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/pmix-unit-XXXXXX";
  REQUIRE(::mkdtemp(lib.dir.data()) != nullptr);
  auto started = start_linked({lib.dir, "n2"}, [] {});
  REQUIRE_MESSAGE(started, (started ? "" : started.error().message));
  lib.server = std::move(started.value());
}

const pmix_info_t* find(const pmix_info_t* info, size_t n, const char* key) {
  for (size_t i = 0; i < n; ++i)
    if (std::strncmp(info[i].key, key, PMIX_MAX_KEYLEN) == 0) return &info[i];
  return nullptr;
}

}  // namespace

TEST_CASE("local ranks are this node's, ascending") {
  CHECK(local_ranks(two_nodes()) == std::vector<int>{1, 3, 4});
}

TEST_CASE("job-level sizes and ids, and per-rank data with local and node ranks") {
  ensure_libpmix();
  auto built = job_info(two_nodes());
  REQUIRE_MESSAGE(built, (built ? "" : built.error().message));
  JobInfo& info = *built;
  const pmix_info_t* size = find(info.info(), info.size(), PMIX_JOB_SIZE);
  REQUIRE(size);
  CHECK(size->value.data.uint32 == 5);
  const pmix_info_t* jobid = find(info.info(), info.size(), PMIX_JOBID);
  REQUIRE(jobid);
  CHECK(std::string(jobid->value.data.string) == "L1");
  CHECK(find(info.info(), info.size(), PMIX_NODE_MAP));
  CHECK(find(info.info(), info.size(), PMIX_PROC_MAP));
  const pmix_info_t* peers = find(info.info(), info.size(), PMIX_LOCAL_PEERS);
  REQUIRE(peers);
  CHECK(std::string(peers->value.data.string) == "1,3,4");

  int procs = 0;
  for (size_t i = 0; i < info.size(); ++i) {
    if (std::strncmp(info.info()[i].key, PMIX_PROC_DATA, PMIX_MAX_KEYLEN) != 0) continue;
    ++procs;
    const pmix_data_array_t* data = info.info()[i].value.data.darray;
    REQUIRE(data->type == PMIX_INFO);
    const auto* entries = static_cast<const pmix_info_t*>(data->array);
    const pmix_info_t* rank = find(entries, data->size, PMIX_RANK);
    const pmix_info_t* local = find(entries, data->size, PMIX_LOCAL_RANK);
    const pmix_info_t* node = find(entries, data->size, PMIX_NODE_RANK);
    REQUIRE(rank);
    REQUIRE(local);
    REQUIRE(node);
    // Ranks 0,2 on n1 and 1,3,4 on n2: local rank = position on its node.
    const int expected_local[] = {0, 0, 1, 1, 2};
    CHECK(local->value.data.uint16 == expected_local[rank->value.data.rank]);
    CHECK(node->value.data.uint16 == expected_local[rank->value.data.rank]);
  }
  CHECK(procs == 5);
}

TEST_CASE("MPMD: one app array per app with its number, size and leader") {
  ensure_libpmix();
  JobLayout l = two_nodes();
  l.appnums = {0, 0, 1, 1, 1};
  auto built = job_info(l);
  REQUIRE_MESSAGE(built, (built ? "" : built.error().message));
  std::vector<std::vector<uint32_t>> apps;  // {appnum, size, leader}
  for (size_t i = 0; i < built->size(); ++i) {
    const pmix_info_t& entry = built->info()[i];
    if (std::strncmp(entry.key, PMIX_APP_INFO_ARRAY, PMIX_MAX_KEYLEN) != 0) continue;
    const pmix_data_array_t* data = entry.value.data.darray;
    const auto* fields = static_cast<const pmix_info_t*>(data->array);
    const pmix_info_t* num = find(fields, data->size, PMIX_APPNUM);
    const pmix_info_t* size = find(fields, data->size, PMIX_APP_SIZE);
    const pmix_info_t* leader = find(fields, data->size, PMIX_APPLDR);
    REQUIRE((num && size && leader));
    apps.push_back({num->value.data.uint32, size->value.data.uint32, leader->value.data.rank});
  }
  CHECK(apps == std::vector<std::vector<uint32_t>>{{0, 2, 0}, {1, 3, 2}});
  l.appnums = {0, 2, 2, 1, 1};  // apps are numbered in rank order
  CHECK_FALSE(job_info(l));
}

TEST_CASE("a namespace of no rank here (a spawned one) has no local peers, sizes or leader") {
  ensure_libpmix();
  JobLayout l = two_nodes();
  l.this_node = -1;
  CHECK(local_ranks(l).empty());
  auto info = job_info(l);
  REQUIRE(info);
  CHECK(find(info->info(), info->size(), PMIX_JOB_SIZE));
  CHECK(find(info->info(), info->size(), PMIX_PROC_MAP));
  CHECK_FALSE(find(info->info(), info->size(), PMIX_LOCAL_PEERS));
  CHECK_FALSE(find(info->info(), info->size(), PMIX_LOCAL_SIZE));
  CHECK_FALSE(find(info->info(), info->size(), PMIX_LOCALLDR));
}

TEST_CASE("layouts that cannot be described are refused") {
  ensure_libpmix();
  JobLayout l = two_nodes();
  l.rank_nodes.push_back(7);
  CHECK_FALSE(job_info(l));
  l = two_nodes();
  l.this_node = 2;
  CHECK_FALSE(job_info(l));
  l.this_node = -2;
  CHECK_FALSE(job_info(l));
  l = two_nodes();
  l.appnums = {0, 1};
  CHECK_FALSE(job_info(l));
  l = two_nodes();
  l.rank_nodes.clear();
  CHECK_FALSE(job_info(l));
}

}  // namespace lattice::pmix
