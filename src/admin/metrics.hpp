// What an operator's monitoring scrapes from an agent (`lattice admin metrics`, and the HTTP
// endpoint metrics.listen): counters the agent keeps since it started and gauges read when
// asked, in the Prometheus text exposition format (version 0.0.4). Pure: the agent owns the
// tally and supplies the gauges. Labels take values from fixed sets the agent names (failure
// kinds, refusal causes): no launch id, user or byte a peer chose ever becomes a label.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lattice::admin {

// Upper bounds of the fence-duration histogram's buckets, in seconds: from a 2-rank fence on
// one node (tens of microseconds) to one that waits on a slow rank's start.
inline constexpr std::array<double, 14> kFenceBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30};

class MetricsTally {
 public:
  // The values the labelled counters can take, shown as 0 before their first count (a scraper's
  // rate() needs the series to exist before it moves).
  MetricsTally(const std::vector<std::string>& failure_reasons,
               const std::vector<std::string>& refusal_causes);

  void launch_started() { ++launches_started_; }
  // A launch ended here; `failure`: the kind of the first failure this node saw, "" for none.
  void launch_ended(std::string_view failure);
  // A fence released this node's ranks `duration_us` after its last local rank entered it.
  void fence_released(uint64_t duration_us);
  // A connection refused or dropped before it authenticated, for `cause`.
  void refused(std::string_view cause);

  uint64_t launches_started() const { return launches_started_; }
  uint64_t launches_ended() const { return launches_ended_; }
  const std::map<std::string, uint64_t, std::less<>>& launches_failed() const { return failed_; }
  const std::map<std::string, uint64_t, std::less<>>& refusals() const { return refused_; }
  // Per bucket (kFenceBuckets), fences no longer than its bound and longer than the previous.
  const std::array<uint64_t, kFenceBuckets.size()>& fence_buckets() const { return buckets_; }
  uint64_t fences() const { return fences_; }
  uint64_t fence_sum_us() const { return fence_sum_us_; }

 private:
  uint64_t launches_started_ = 0, launches_ended_ = 0;
  std::map<std::string, uint64_t, std::less<>> failed_;
  std::map<std::string, uint64_t, std::less<>> refused_;
  std::array<uint64_t, kFenceBuckets.size()> buckets_{};
  uint64_t fences_ = 0, fence_sum_us_ = 0;
};

// Read when asked.
struct MetricsGauges {
  std::string version;
  std::string node_id;
  uint64_t uptime_ms = 0;
  bool draining = false;
  uint64_t certificate_expiry = 0;  // its identity's certificate's not-after; 0: no identity
  size_t launches_running = 0;
  size_t ranks_running = 0;
  size_t allocations = 0;
  size_t open_links = 0;
  size_t peer_links = 0;
  uint64_t messages_sent = 0, messages_received = 0;
  uint64_t sealed_bytes_sent = 0, sealed_bytes_received = 0;
  uint64_t resident_bytes = 0;  // 0: unknown (then not shown)
  size_t open_fds = 0;          // likewise
  size_t max_fds = 0;           // likewise
};

std::string render_metrics(const MetricsTally& tally, const MetricsGauges& gauges);

}  // namespace lattice::admin
