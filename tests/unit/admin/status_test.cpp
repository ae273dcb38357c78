#include <doctest/doctest.h>

#include "admin/status.hpp"

using namespace lattice::admin;

namespace {
struct Fake : AgentControl {
  AgentStatus s;
  AgentStatus status() override { return s; }
};
bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}
LaunchRow launch(const std::string& id) {
  LaunchRow l;
  l.launch_id = id;
  l.nnodes = 2;
  l.world_size = 4;
  l.fence_epoch = 1;
  l.ranks = {{0, 100, "in_fence", "barrier_in", 1500, 2}, {1, 101, "initialized", "put", 20, 1}};
  l.fence_waiting_for = {1};
  l.children_pending = {1};
  return l;
}
}  // namespace

TEST_CASE("status with no launches") {
  Fake f;
  f.s = {"0.1.0", "n1", "127.0.0.1:7400", 61000, {}};
  auto out = handle_request("status\n", f);
  CHECK(contains(out, "lattice-agentd 0.1.0 on node n1"));
  CHECK(contains(out, "127.0.0.1:7400"));
  CHECK(contains(out, "0 launches"));
}

TEST_CASE("a launch shows its ranks, the pending fence and whom it waits for") {
  Fake f;
  f.s = {"0.1.0", "n1", "h:1", 0, {launch("abc"), launch("def")}};
  auto out = handle_request("status", f);
  CHECK(contains(out, "2 launches"));
  CHECK(contains(out, "launch abc"));
  CHECK(contains(out, "fence 2 waiting for local ranks 1"));
  CHECK(contains(out, "waiting for child nodes 1"));
  CHECK(contains(out, "RANK  PID"));
  CHECK(contains(out, "barrier_in"));
  auto one = handle_request("status def", f);
  CHECK_FALSE(contains(one, "launch abc"));
  CHECK(contains(one, "launch def"));
  CHECK(contains(handle_request("status zzz", f), "error: no launch 'zzz'"));
}

TEST_CASE("unknown requests get an error line") {
  Fake f;
  CHECK(contains(handle_request("reboot", f), "error: unknown request 'reboot'"));
  CHECK(contains(handle_request("", f), "error: unknown request"));
}

TEST_CASE("rank lists compress") {
  CHECK(compress_list({0, 1, 2, 3, 7}) == "0-3,7");
  CHECK(compress_list({5}) == "5");
}
