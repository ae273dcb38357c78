// Admin protocol and rendering: requests in, the exact text an operator reads out. A fake
// AgentControl supplies the state, so these cover rendering with 0, 1 and 2 launches, the
// pending-fence lines, column alignment and the error answers.
#include "admin/status.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace lattice::admin;

namespace {

struct FakeControl : AgentControl {
  AgentStatus state;
  int calls = 0;
  std::vector<std::string> ended;
  AgentStatus status() override {
    ++calls;
    return state;
  }
  std::string end_allocation(const std::string& id) override {
    if (id != "A1") return "no allocation '" + id + "' here";
    ended.push_back(id);
    return "";
  }
  void drain(const std::string& reason) override { state.draining = reason; }
  std::string metrics() override { return "lattice_agent_draining 0\n"; }
};

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t eol; (eol = text.find('\n', start)) != std::string::npos; start = eol + 1)
    out.push_back(text.substr(start, eol - start));
  return out;
}

AgentStatus agent(std::vector<LaunchRow> launches) {
  AgentStatus s;
  s.version = "0.1.0";
  s.node_id = "n1";
  s.listen = "127.0.0.1:7400";
  s.uptime_ms = 61500;
  s.launches = std::move(launches);
  return s;
}

LaunchRow launch(const std::string& id) {
  LaunchRow l;
  l.launch_id = id;
  l.node_index = 0;
  l.nnodes = 2;
  l.world_size = 4;
  l.fence_epoch = 1;
  l.age_ms = 2300;
  l.ranks = {{0, 4242, "in_fence", "kvs-fence", 1500, 2},
             {1, 101, "initialized", "put", 20, 1},
             {2, 0, "", "", 0, 0}};
  return l;
}

}  // namespace

TEST_CASE("status with no launches is the header alone") {
  FakeControl control;
  control.state = agent({});
  std::string out = handle_request("status\n", control);
  CHECK(out ==
        "lattice-agentd 0.1.0 on node n1, listening on 127.0.0.1:7400, up 1m01s, 0 launches; "
        "messages 0 out, 0 in; links: 0 to peers (0 held), 0 open; 0 allocations\n");
  CHECK(control.calls == 1);
}

TEST_CASE("one launch: summary line and an aligned rank table") {
  FakeControl control;
  control.state = agent({launch("abc")});
  control.state.peer_links = 3;
  control.state.peer_links_held = 2;
  control.state.open_links = 4;
  auto out = lines(handle_request("status", control));
  REQUIRE(out.size() == 6);
  CHECK(out[0] ==
        "lattice-agentd 0.1.0 on node n1, listening on 127.0.0.1:7400, up 1m01s, 1 launch; "
        "messages 0 out, 0 in; links: 3 to peers (2 held), 4 open; 0 allocations");
  CHECK(out[1] == "launch abc: node 0 of 2, 3 of 4 ranks here, age 2.3s, fence epoch 1");
  CHECK(out[2] == "  RANK  PID   PMI-STATE    LAST-CMD   IDLE  FENCE");
  CHECK(out[3] == "  0     4242  in_fence     kvs-fence  1.5s  2");
  CHECK(out[4] == "  1     101   initialized  put        0.0s  1");
  CHECK(out[5] == "  2     -     -            -          0.0s  0");  // not spawned yet, never spoke
}

TEST_CASE("a pending fence says whom it waits for, compressed") {
  FakeControl control;
  LaunchRow l = launch("abc");
  l.fence_waiting_for = {5, 1, 2, 3, 9, 10};
  l.children_pending = {1};
  control.state = agent({l});
  std::string out = handle_request("status", control);
  CHECK(contains(out, "\n  fence 2 waiting for ranks 1-3,5,9-10\n"));
  CHECK(contains(out, "\n  fence waiting for child nodes 1\n"));

  l.fence_waiting_for.clear();
  l.children_pending.clear();
  control.state = agent({l});
  CHECK_FALSE(contains(handle_request("status", control), "waiting for"));
}

TEST_CASE("the latest fence's phases, and '-' for those not reached") {
  FakeControl control;
  LaunchRow l = launch("abc");
  l.last_fence = {FenceRow{3, 12300, 12900, 0, 0}};
  control.state = agent({l});
  CHECK(
      contains(handle_request("status", control),
               "\n  last fence 3 (since the launch arrived): last rank in 12.3 ms, merged 12.9 ms, "
               "store in -, released -\n"));
}

TEST_CASE("two launches, and asking for one of them") {
  FakeControl control;
  control.state = agent({launch("abc"), launch("def")});
  std::string all = handle_request("status\r\n", control);
  CHECK(contains(all, "2 launches;"));
  CHECK(all.find("launch abc:") < all.find("launch def:"));

  std::string one = handle_request("status def\n", control);
  CHECK(contains(one, "2 launches;"));  // the header still counts every launch
  CHECK_FALSE(contains(one, "launch abc:"));
  CHECK(contains(one, "launch def:"));

  CHECK(handle_request("status zzz", control) == "error: no launch 'zzz' on this agent\n");
}

TEST_CASE("unknown or malformed requests get one error line and no status call") {
  FakeControl control;
  CHECK(handle_request("reboot\n", control) ==
        "error: unknown request 'reboot' (try: status, allocations, metrics, end-allocation ID, "
        "drain [REASON], undrain)\n");
  CHECK(handle_request("", control) ==
        "error: unknown request '' (try: status, allocations, metrics, end-allocation ID, "
        "drain [REASON], undrain)\n");
  CHECK(
      handle_request("status a b", control) ==
      "error: unknown request 'status a b' (try: status, allocations, metrics, end-allocation ID, "
      "drain [REASON], undrain)\n");
  CHECK(handle_request("STATUS", control) ==
        "error: unknown request 'STATUS' (try: status, allocations, metrics, end-allocation ID, "
        "drain [REASON], undrain)\n");
  CHECK(control.calls == 0);
}

TEST_CASE("what ranks and clients sent reaches no terminal raw (found by fuzz_admin)") {
  FakeControl control;
  LaunchRow l = launch("L1");
  l.ranks[1].last_command = "\x1b]0;owned\x07put";  // a rank's PMI command is whatever it sent
  control.state = agent({l});
  std::string out = handle_request("status", control);
  CHECK(contains(out, "\\x1b]0;owned\\x07put"));
  CHECK(handle_request("stat\x1b[2J", control) ==
        "error: unknown request 'stat\\x1b[2J' (try: status, allocations, metrics, end-allocation "
        "ID, "
        "drain [REASON], undrain)\n");
  CHECK(handle_request("status L\x1b[2J", control) ==
        "error: no launch 'L\\x1b[2J' on this agent\n");
  for (const auto& answer : {out, handle_request("stat\x1b[2J", control)})
    for (unsigned char c : answer) CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
}

TEST_CASE("durations are human-sized") {
  CHECK(format_duration(0) == "0.0s");
  CHECK(format_duration(1999) == "1.9s");
  CHECK(format_duration(59999) == "59.9s");
  CHECK(format_duration(60000) == "1m00s");
  CHECK(format_duration(3599000) == "59m59s");
  CHECK(format_duration(3600000 + 5 * 60000) == "1h05m");
  CHECK(format_duration(3 * 86400000ULL + 3600000) == "3d01h");
}

TEST_CASE("allocations: listed, and ended by an operator") {
  FakeControl control;
  control.state = agent({});
  CHECK(handle_request("allocations", control) == "no allocations on node n1\n");
  AllocationRow a;
  a.id = "A1";
  a.user = "alice";
  a.uid = 1001;
  a.node_index = 1;
  a.nnodes = 4;
  a.remaining_ms = 90000;
  a.launches = 2;
  a.limits = "memory: not enforced";
  control.state.allocations = {a};
  auto out = lines(handle_request("allocations", control));
  REQUIRE(out.size() == 2);
  CHECK(out[0] == "  ALLOCATION  USER          NODE  LEFT   LAUNCHES  STATE    LIMITS");
  CHECK(out[1] ==
        "  A1          alice (1001)  1/4   1m30s  2         running  memory: not enforced");
  CHECK(contains(handle_request("status", control), "; 1 allocation\n"));
  CHECK(handle_request("end-allocation A1", control) == "allocation A1 is ending\n");
  CHECK(control.ended == std::vector<std::string>{"A1"});
  CHECK(handle_request("end-allocation B2", control) == "error: no allocation 'B2' here\n");
  CHECK(contains(handle_request("end-allocation", control), "error: unknown request"));
}

TEST_CASE("drain: a reason (or a default), shown in the status, and ended by undrain") {
  FakeControl control;
  control.state = agent({});
  CHECK(handle_request("drain disk\x1b[2J swap\n", control) ==
        "draining: new launches and allocations are refused (disk\\x1b[2J swap)\n");
  CHECK(control.state.draining == "disk\\x1b[2J swap");  // no escape reaches a terminal
  CHECK(contains(handle_request("status", control), "\ndraining: disk\\x1b[2J swap\n"));
  CHECK(handle_request("undrain", control) ==
        "no longer draining: new launches and allocations are accepted\n");
  CHECK(control.state.draining.empty());
  CHECK_FALSE(contains(handle_request("status", control), "draining"));
  handle_request("drain", control);
  CHECK(control.state.draining == "drained by an operator");
  handle_request("drain " + std::string(1000, 'x'), control);
  CHECK(control.state.draining.size() == kMaxDrainReason);
  CHECK(contains(handle_request("undrain now", control), "error: unknown request"));
}

TEST_CASE("status as JSON: the same state, every field named, a rank's bytes never fatal") {
  FakeControl control;
  auto one = launch("L1");
  one.ranks[0].last_command = std::string("cmd=\xff\x1b[2J", 9);  // not UTF-8, an escape
  one.fence_waiting_for = {2};
  control.state = agent({one, launch("L2")});
  control.state.draining = "disk";
  AllocationRow a;
  a.id = "A1";
  a.user = "alice";
  a.uid = 1000;
  control.state.allocations.push_back(a);
  const std::string text = handle_request("status-json", control);
  auto j = nlohmann::json::parse(text);
  CHECK(j["node_id"] == "n1");
  CHECK(j["uptime_ms"] == 61500);
  CHECK(j["draining"] == "disk");
  REQUIRE(j["launches"].size() == 2);
  CHECK(j["launches"][0]["launch_id"] == "L1");
  CHECK(j["launches"][0]["fence_waiting_for"] == nlohmann::json::array({2}));
  CHECK(j["launches"][0]["ranks"][0]["pid"] == 4242);
  CHECK(j["launches"][0]["ranks"][0]["pmi_state"] == "in_fence");
  for (unsigned char c : text)  // escaped: no raw escape byte, nothing beyond ASCII
    CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
  CHECK(j["allocations"][0]["user"] == "alice");
  auto only = nlohmann::json::parse(handle_request("status-json L2", control));
  REQUIRE(only["launches"].size() == 1);
  CHECK(only["launches"][0]["launch_id"] == "L2");
  CHECK(handle_request("status-json L9", control).rfind("error: no launch 'L9'", 0) == 0);
}

TEST_CASE("metrics: the agent's rendering, as it gives it") {
  FakeControl control;
  CHECK(handle_request("metrics\n", control) == "lattice_agent_draining 0\n");
  CHECK(handle_request("metrics now", control).rfind("error: unknown request", 0) == 0);
}
