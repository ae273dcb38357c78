#include "launcher/report.hpp"

#include <doctest/doctest.h>

using namespace lattice::launcher;

TEST_CASE("labels prefix every line, including an unterminated last one") {
  CHECK(label_lines(3, "a\nb\n") == "3: a\n3: b\n");
  CHECK(label_lines(12, "x") == "12: x");
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
  auto s = summarize_exits(ranks, 4);
  CHECK(s.find("ranks 0,2: exited 0") != std::string::npos);
  CHECK(s.find("rank 1: exited with status 7") != std::string::npos);
  CHECK(s.find("rank 3: no exit status") != std::string::npos);
}

TEST_CASE("the timing line shows CXI provisioning only when the launch had it") {
  lattice::launcher::Timings t;
  t.connect = 1.5;
  t.total = 9;
  CHECK(lattice::launcher::format_timings(t).find("CXI") == std::string::npos);
  t.credentials = 2.25;
  CHECK(lattice::launcher::format_timings(t).find(
            "connect 1.5 ms, CXI credentials 2.2 ms, fan-out") != std::string::npos);
}
