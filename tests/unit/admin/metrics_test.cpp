// The metrics an operator scrapes: the tally's counts and the text format's rules (one family
// announced once, before its samples; histogram buckets cumulative up to +Inf = the count).
// The integration test parses a real agent's answer with prometheus_client's own parser.
#include "admin/metrics.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace lattice::admin;

namespace {

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("labelled counters exist at 0 before their first count, and count after") {
  MetricsTally tally({"exited", "fence_timeout"}, {"key", "version"});
  std::string before = render_metrics(tally, {});
  CHECK(contains(before, "lattice_launches_failed_total{reason=\"exited\"} 0\n"));
  CHECK(contains(before, "lattice_connections_refused_total{cause=\"version\"} 0\n"));

  tally.launch_started();
  tally.launch_started();
  tally.launch_ended("");
  tally.launch_ended("exited");
  tally.refused("key");
  tally.refused("key");
  tally.refused("timeout");  // not declared: counted all the same
  std::string after = render_metrics(tally, {});
  CHECK(contains(after, "lattice_launches_started_total 2\n"));
  CHECK(contains(after, "lattice_launches_ended_total 2\n"));
  CHECK(contains(after, "lattice_launches_failed_total{reason=\"exited\"} 1\n"));
  CHECK(contains(after, "lattice_launches_failed_total{reason=\"fence_timeout\"} 0\n"));
  CHECK(contains(after, "lattice_connections_refused_total{cause=\"key\"} 2\n"));
  CHECK(contains(after, "lattice_connections_refused_total{cause=\"timeout\"} 1\n"));
}

TEST_CASE("the fence histogram is cumulative, and +Inf holds what is beyond every bound") {
  MetricsTally tally({}, {});
  tally.fence_released(50);         // 50 us: the first bucket (0.0001 s)
  tally.fence_released(100);        // on the first bound: still in it
  tally.fence_released(2000);       // 2 ms: 0.0025
  tally.fence_released(120000000);  // 120 s: beyond the last bound
  std::string text = render_metrics(tally, {});
  CHECK(contains(text, "# TYPE lattice_fence_duration_seconds histogram\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_bucket{le=\"0.0001\"} 2\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_bucket{le=\"0.001\"} 2\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_bucket{le=\"0.0025\"} 3\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_bucket{le=\"30\"} 3\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_bucket{le=\"+Inf\"} 4\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_count 4\n"));
  CHECK(contains(text, "lattice_fence_duration_seconds_sum 120.00215\n"));
}

TEST_CASE("gauges: process figures only when known; label values stay one quoted line") {
  MetricsTally tally({}, {});
  MetricsGauges g;
  g.version = "0.1.0";
  g.node_id = "n\"1\\\nx";
  g.uptime_ms = 1500;
  g.draining = true;
  g.ranks_running = 64;
  g.sealed_bytes_sent = 12345;
  std::string text = render_metrics(tally, g);
  CHECK(contains(text, "lattice_agent_info{version=\"0.1.0\",node=\"n\\\"1\\\\?x\"} 1\n"));
  CHECK(contains(text, "lattice_agent_uptime_seconds 1.5\n"));
  CHECK(contains(text, "lattice_agent_draining 1\n"));
  CHECK(contains(text, "lattice_ranks_running 64\n"));
  CHECK(contains(text, "lattice_sealed_bytes_sent_total 12345\n"));
  CHECK_FALSE(contains(text, "process_resident_memory_bytes"));
  g.resident_bytes = 4096;
  g.open_fds = 9;
  text = render_metrics(tally, g);
  CHECK(contains(text, "process_resident_memory_bytes 4096\n"));
  CHECK(contains(text, "process_open_fds 9\n"));
  for (char c : text) CHECK((c == '\n' || (c >= 0x20 && c < 0x7f)));
}

TEST_CASE("every family is announced once, HELP then TYPE, before its samples") {
  MetricsTally tally({"exited"}, {"key"});
  std::string text = render_metrics(tally, {});
  std::string last_type;
  size_t start = 0;
  for (size_t eol; (eol = text.find('\n', start)) != std::string::npos; start = eol + 1) {
    std::string line = text.substr(start, eol - start);
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      CHECK(text.find("# TYPE " + name + " ") == start);  // once
      last_type = name;
      continue;
    }
    // A sample belongs to the family announced last (a histogram's by its suffixes).
    CHECK(line.rfind(last_type, 0) == 0);
  }
  CHECK(text.back() == '\n');
}
