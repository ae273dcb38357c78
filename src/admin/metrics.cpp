#include "admin/metrics.hpp"

#include <cstdio>

#include "base/strings.hpp"

namespace lattice::admin {

MetricsTally::MetricsTally(const std::vector<std::string>& failure_reasons,
                           const std::vector<std::string>& refusal_causes) {
  for (const auto& reason : failure_reasons) failed_[reason];
  for (const auto& cause : refusal_causes) refused_[cause];
}

namespace {

void add(std::map<std::string, uint64_t, std::less<>>& counts, std::string_view key) {
  auto it = counts.find(key);
  if (it == counts.end()) it = counts.emplace(std::string(key), 0).first;
  ++it->second;
}

// A label value as the format quotes it; bytes beyond printable ASCII (there should be none:
// the values are ours) become '?', so that the answer stays one line per sample.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

class Writer {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += cat("# HELP ", name, ' ', help, "\n# TYPE ", name, ' ', type, '\n');
  }
  void sample(std::string_view name, uint64_t value, std::string_view labels = "") {
    out_ += cat(name, labels.empty() ? "" : cat('{', labels, '}'), ' ', value, '\n');
  }
  void sample(std::string_view name, double value, std::string_view labels = "") {
    out_ += cat(name, labels.empty() ? "" : cat('{', labels, '}'), ' ', number(value), '\n');
  }
  void one(std::string_view name, std::string_view type, std::string_view help, uint64_t value) {
    family(name, type, help);
    sample(name, value);
  }
  void by_label(std::string_view name, std::string_view help, std::string_view key,
                const std::map<std::string, uint64_t, std::less<>>& counts) {
    family(name, "counter", help);
    for (const auto& [value, count] : counts)
      sample(name, count, cat(key, "=\"", label(value), '"'));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

void MetricsTally::launch_ended(std::string_view failure) {
  ++launches_ended_;
  if (!failure.empty()) add(failed_, failure);
}

void MetricsTally::fence_released(uint64_t duration_us) {
  ++fences_;
  fence_sum_us_ += duration_us;
  double seconds = static_cast<double>(duration_us) / 1e6;
  for (size_t i = 0; i < kFenceBuckets.size(); ++i)
    if (seconds <= kFenceBuckets[i]) return void(++buckets_[i]);
  // Longer than the last bound: only in +Inf, which is the count.
}

void MetricsTally::refused(std::string_view cause) { add(refused_, cause); }

std::string render_metrics(const MetricsTally& tally, const MetricsGauges& g) {
  Writer w;
  w.family("lattice_agent_info", "gauge", "This agent's release and node id (value 1).");
  w.sample("lattice_agent_info", uint64_t{1},
           cat("version=\"", label(g.version), "\",node=\"", label(g.node_id), '"'));
  w.family("lattice_agent_uptime_seconds", "gauge", "Seconds since the agent started.");
  w.sample("lattice_agent_uptime_seconds", static_cast<double>(g.uptime_ms) / 1000);
  w.one("lattice_agent_draining", "gauge",
        "1 while an operator drains the node (lattice admin drain).", g.draining ? 1 : 0);
  if (g.certificate_expiry)
    w.one("lattice_certificate_expiry_timestamp_seconds", "gauge",
          "When this agent's certified identity expires (Unix time): renew it before.",
          g.certificate_expiry);
  w.one("lattice_launches_started_total", "counter", "Launches accepted on this node.",
        tally.launches_started());
  w.one("lattice_launches_ended_total", "counter", "Launches that ended on this node.",
        tally.launches_ended());
  w.by_label("lattice_launches_failed_total",
             "Launches that ended on this node with a failure, by the first failure it saw.",
             "reason", tally.launches_failed());
  w.one("lattice_launches_running", "gauge", "Launches running on this node.", g.launches_running);
  w.one("lattice_ranks_running", "gauge", "Rank processes running on this node.", g.ranks_running);
  w.one("lattice_allocations", "gauge", "Allocations this node holds.", g.allocations);

  const char* fence = "lattice_fence_duration_seconds";
  w.family(fence, "histogram",
           "Fences on this node, from the last local rank's entry to the ranks' release.");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kFenceBuckets.size(); ++i) {
    cumulative += tally.fence_buckets()[i];
    w.sample(cat(fence, "_bucket"), cumulative, cat("le=\"", number(kFenceBuckets[i]), '"'));
  }
  w.sample(cat(fence, "_bucket"), tally.fences(), "le=\"+Inf\"");
  w.sample(cat(fence, "_sum"), static_cast<double>(tally.fence_sum_us()) / 1e6);
  w.sample(cat(fence, "_count"), tally.fences());

  w.by_label("lattice_connections_refused_total",
             "Connections refused or dropped before they authenticated, by cause.", "cause",
             tally.refusals());
  w.one("lattice_links_open", "gauge", "Sealed links open (launchers and peer agents).",
        g.open_links);
  w.one("lattice_peer_links", "gauge", "Peer agents with a link up, coming up or awaited.",
        g.peer_links);
  w.one("lattice_messages_sent_total", "counter", "RPC messages sent on every link.",
        g.messages_sent);
  w.one("lattice_messages_received_total", "counter", "RPC messages received on every link.",
        g.messages_received);
  w.one("lattice_sealed_bytes_sent_total", "counter",
        "Bytes sent on sealed links (handshakes and records).", g.sealed_bytes_sent);
  w.one("lattice_sealed_bytes_received_total", "counter",
        "Bytes received on sealed links (handshakes and records).", g.sealed_bytes_received);
  // The names every Prometheus client library gives these, so dashboards need nothing new.
  if (g.resident_bytes)
    w.one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          g.resident_bytes);
  if (g.open_fds)
    w.one("process_open_fds", "gauge", "Number of open file descriptors.", g.open_fds);
  if (g.max_fds)
    w.one("process_max_fds", "gauge", "Maximum number of open file descriptors.", g.max_fds);
  return w.take();
}

}  // namespace lattice::admin
