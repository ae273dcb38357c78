// Renders the agent's state for `lattice admin status`: a header line, then per launch a summary
// line, what a pending fence waits for, and an aligned rank table. Meant for a person reading a
// hung job, so durations are human-sized and rank lists are compressed ("0-3,7").
#include "admin/status.hpp"

#include <algorithm>
#include <cstdio>

#include "base/strings.hpp"

namespace lattice::admin {
namespace {

constexpr size_t kColumnGap = 2;  // spaces between table columns
constexpr uint64_t kMsPerSecond = 1000;
constexpr uint64_t kSecondsPerMinute = 60;
constexpr uint64_t kSecondsPerHour = 3600;
constexpr uint64_t kSecondsPerDay = 86400;

std::string two_digits(uint64_t n) { return n < 10 ? cat('0', n) : cat(n); }

}  // namespace

std::string format_duration(uint64_t ms) {
  uint64_t s = ms / kMsPerSecond;
  if (s < kSecondsPerMinute) return cat(s, '.', (ms % kMsPerSecond) / 100, 's');
  if (s < kSecondsPerHour)
    return cat(s / kSecondsPerMinute, 'm', two_digits(s % kSecondsPerMinute), 's');
  if (s < kSecondsPerDay)
    return cat(s / kSecondsPerHour, 'h', two_digits(s % kSecondsPerHour / kSecondsPerMinute), 'm');
  return cat(s / kSecondsPerDay, 'd', two_digits(s % kSecondsPerDay / kSecondsPerHour), 'h');
}

namespace {

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + kColumnGap, ' ');
    }
    out += line + '\n';
  }
  return out;
}

std::string render_launch(const LaunchRow& l) {
  std::string out = cat("launch ", l.launch_id, ": node ", l.node_index, " of ", l.nnodes, ", ",
                        l.ranks.size(), " of ", l.world_size, " ranks here, age ",
                        format_duration(l.age_ms), ", fence epoch ", l.fence_epoch, '\n');
  if (!l.fence_waiting_for.empty())
    out += cat("  fence ", l.fence_epoch + 1, " waiting for ranks ",
               compress_ranges(l.fence_waiting_for), '\n');
  if (!l.children_pending.empty())
    out += cat("  fence waiting for child nodes ", compress_ranges(l.children_pending), '\n');
  for (const FenceRow& f : l.last_fence) {
    auto ms = [](uint64_t us) {
      if (!us) return std::string("-");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1e3);
      return std::string(buf);
    };
    out += cat("  last fence ", f.epoch, " (since the launch arrived): last rank in ",
               ms(f.entered_us), ", merged ", ms(f.reduced_us), ", store in ", ms(f.store_us),
               ", released ", ms(f.released_us), '\n');
  }
  std::vector<std::vector<std::string>> rows{
      {"RANK", "PID", "PMI-STATE", "LAST-CMD", "IDLE", "FENCE"}};
  for (const auto& r : l.ranks)
    rows.push_back({std::to_string(r.rank), r.pid > 0 ? std::to_string(r.pid) : "-",
                    r.pmi_state.empty() ? "-" : r.pmi_state,
                    r.last_command.empty() ? "-" : printable(r.last_command),
                    format_duration(r.idle_ms), std::to_string(r.fence_epoch)});
  return out + render_table(rows);
}

}  // namespace

std::string render_allocations(const AgentStatus& s) {
  if (s.allocations.empty()) return cat("no allocations on node ", s.node_id, '\n');
  std::vector<std::vector<std::string>> rows{
      {"ALLOCATION", "USER", "NODE", "LEFT", "LAUNCHES", "STATE", "LIMITS"}};
  for (const auto& a : s.allocations)
    rows.push_back({printable(a.id), cat(printable(a.user), " (", a.uid, ")"),
                    cat(a.node_index, '/', a.nnodes),
                    a.remaining_ms ? format_duration(a.remaining_ms) : "-",
                    std::to_string(a.launches), a.ending ? "ending" : "running", a.limits});
  return render_table(rows);
}

std::string render_status(const AgentStatus& s, const std::string& only_launch) {
  std::string out =
      cat("lattice-agentd ", s.version, " on node ", s.node_id, ", listening on ",
          s.listen.empty() ? "-" : s.listen, ", up ", format_duration(s.uptime_ms), ", ",
          s.launches.size(), s.launches.size() == 1 ? " launch" : " launches", "; messages ",
          s.messages_sent, " out, ", s.messages_received, " in; links: ", s.peer_links,
          " to peers (", s.peer_links_held, " held), ", s.open_links, " open; ",
          s.allocations.size(), s.allocations.size() == 1 ? " allocation" : " allocations", '\n');
  if (!s.draining.empty()) out += cat("draining: ", s.draining, '\n');
  bool found = false;
  for (const auto& l : s.launches) {
    if (!only_launch.empty() && l.launch_id != only_launch) continue;
    found = true;
    out += render_launch(l);
  }
  if (!only_launch.empty() && !found)
    return cat("error: no launch '", printable(only_launch), "' on this agent\n");
  return out;
}

std::string handle_request(std::string_view line, AgentControl& control) {
  // The agent may hand over the line with its "\n" (or a client's "\r\n") still attached.
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::vector<std::string> words;
  for (auto& w : split(line, ' '))
    if (!w.empty()) words.push_back(std::move(w));
  if (!words.empty() && words[0] == "status" && words.size() <= 2)
    return render_status(control.status(), words.size() == 2 ? words[1] : "");
  if (!words.empty() && words[0] == "status-json" && words.size() <= 2)
    return render_status_json(control.status(), words.size() == 2 ? words[1] : "");
  if (words.size() == 1 && words[0] == "allocations") return render_allocations(control.status());
  if (words.size() == 1 && words[0] == "metrics") return control.metrics();
  if (words.size() == 2 && words[0] == "end-allocation") {
    std::string refusal = control.end_allocation(words[1]);
    if (!refusal.empty()) return cat("error: ", printable(refusal), '\n');
    return cat("allocation ", printable(words[1]), " is ending\n");
  }
  if (!words.empty() && words[0] == "drain") {
    std::string reason = words.size() == 1
                             ? "drained by an operator"
                             : join(std::vector<std::string>(words.begin() + 1, words.end()), " ");
    reason = printable(reason.substr(0, kMaxDrainReason));
    control.drain(reason);
    return cat("draining: new launches and allocations are refused (", reason, ")\n");
  }
  if (words.size() == 1 && words[0] == "undrain") {
    control.drain("");
    return "no longer draining: new launches and allocations are accepted\n";
  }
  return cat("error: unknown request '", printable(line),
             "' (try: status, allocations, metrics, end-allocation ID, drain [REASON], undrain)\n");
}

}  // namespace lattice::admin
