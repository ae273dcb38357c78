#include "launcher/report.hpp"

#include <doctest/doctest.h>

using namespace lattice::launcher;

TEST_CASE("labels prefix every line, including an unterminated last one") {
  bool at_start = true;
  CHECK(label_lines("", 3, "a\nb\n", at_start) == "3: a\n3: b\n");
  CHECK(at_start);
  CHECK(label_lines("", 12, "x", at_start) == "12: x");
  // A long line in pieces: the label once, at its start.
  CHECK_FALSE(at_start);
  CHECK(label_lines("", 12, "yy", at_start) == "yy");
  CHECK(label_lines("", 12, "z\nnext\n", at_start) == "z\n12: next\n");
  CHECK(at_start);
}

TEST_CASE("job exit code: first failing rank's code, 128+signal, 0 when clean") {
  std::map<int, RankResult> ranks{{0, {0, 0, 0}}, {1, {0, 0, 0}}};
  CHECK(job_exit_code(std::nullopt, ranks, 2) == 0);
  CHECK(job_exit_code(std::nullopt, ranks, 3) == 1);  // a rank never reported
  ranks[1] = {0, 0, 9};
  CHECK(job_exit_code(std::nullopt, ranks, 2) == 137);
  CHECK(job_exit_code(JobFailure{"rank 1 called abort", 7, 1}, ranks, 2) == 7);
}

TEST_CASE("exit summary groups ranks by outcome") {
  std::map<int, RankResult> ranks{{0, {0, 0, 0}}, {1, {0, 7, 0}}, {2, {0, 0, 0}}};
  // Ranks 0-3 on node 0, which ended; 4-5 on node 1, which did not (lost).
  std::vector<int> rank_nodes{0, 0, 0, 0, 1, 1};
  auto s = summarize_exits(ranks, rank_nodes, {true, false});
  CHECK(s.find("ranks 0,2: exited 0") != std::string::npos);
  CHECK(s.find("rank 1: exited with status 7") != std::string::npos);
  CHECK(s.find("rank 3: not started") != std::string::npos);
  CHECK(s.find("ranks 4-5: no exit status") != std::string::npos);
}

TEST_CASE(
    "the timing line shows CXI provisioning and the user lookup only when the launch had them") {
  lattice::launcher::Timings t;
  t.connect = 1.5;
  t.fan_out = 4;
  t.spawn = 7;
  t.total = 9;
  auto line = [&t] { return lattice::launcher::format_timings(t); };
  CHECK(line().find("CXI") == std::string::npos);
  CHECK(line().find("user") == std::string::npos);
  t.credentials = 2.25;
  CHECK(line().find("connect 1.5 ms, CXI credentials 2.2 ms, requests sent -") !=
        std::string::npos);
  t.user_lookup = 5.5;
  CHECK(line().find("fan-out 4.0 ms, user looked up 5.5 ms, spawn 7.0 ms") != std::string::npos);
}

TEST_CASE("fence phases: the latest node per phase, the critical path, last and slowest") {
  using lattice::launcher::NodeFence;
  std::vector<NodeFence> few{{1, "n1", 10, 10.5, 11, 11.2}, {1, "n2", 10.4, 10.6, 11.3, 11.5}};
  CHECK(lattice::launcher::format_fence_phases(few) ==
        "lattice: fence 1: critical path 1.10 ms, last rank in 10.4 ms (n2), merged 10.6 ms (n2), "
        "store in 11.3 ms (n2), released 11.5 ms (n2)\n");
  std::vector<NodeFence> many;
  for (uint64_t e = 1; e <= 5; ++e)  // fence 2 is the slow one
    many.push_back(NodeFence{e, "n1", e * 10.0, -1, -1, e * 10.0 + (e == 2 ? 4 : 1)});
  std::string out = lattice::launcher::format_fence_phases(many);
  CHECK(out.find("lattice: fence 2 (slowest): critical path 4.00 ms") != std::string::npos);
  CHECK(out.find("lattice: fence 5: critical path 1.00 ms") != std::string::npos);
  CHECK(out.find("merged") == std::string::npos);  // a phase no node reached is left out
  CHECK(out.find("lattice: fences: 5 timed (1 to 5)") != std::string::npos);
  CHECK(lattice::launcher::format_fence_phases({}).empty());
}

TEST_CASE("an agent's clock starts midway between the request's send and the latest arrival") {
  using lattice::launcher::agent_clock_origin_ms;
  // Sent at 10, reply back at 50, the agent replied 20 ms after the request arrived: the request
  // arrived between 10 and 30.
  CHECK(agent_clock_origin_ms(10, 50, 20) == doctest::Approx(20));
  // A reply that took no time to come back: the request arrived at its send time.
  CHECK(agent_clock_origin_ms(10, 30, 20) == doctest::Approx(10));
  // Never accepted (-1), or an agent clock that ran ahead: the send time is the only bound.
  CHECK(agent_clock_origin_ms(10, -1, 0) == doctest::Approx(10));
  CHECK(agent_clock_origin_ms(10, 25, 20) == doctest::Approx(10));
}

TEST_CASE("stragglers are reported by rank, with their node and last PMI command") {
  CHECK(format_stragglers({{4, "n4", "initialized", "put", 1534}, {2, "n4", "waiting", "", 0}}) ==
        "lattice: straggler report: ranks that never entered the fence:\n"
        "lattice:   rank 2 on n4: waiting, no PMI command yet\n"
        "lattice:   rank 4 on n4: initialized, last PMI command 'put' 1.5 s ago\n");
}
