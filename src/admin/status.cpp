#include "admin/status.hpp"

#include <algorithm>
#include <cstdio>

#include "base/strings.hpp"

namespace lattice::admin {
namespace {

std::string seconds(uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string render_launch(const LaunchRow& l) {
  std::string out = cat("launch ", l.launch_id, ": node ", l.node_index, " of ", l.nnodes, ", ",
                        l.ranks.size(), " of ", l.world_size, " ranks here, age ",
                        seconds(l.age_ms), ", fence epoch ", l.fence_epoch, '\n');
  if (!l.fence_waiting_for.empty() && l.fence_waiting_for.size() < l.ranks.size())
    out += cat("  fence ", l.fence_epoch + 1, " waiting for local ranks ",
               compress_list(l.fence_waiting_for), '\n');
  if (!l.children_pending.empty())
    out += cat("  fence waiting for child nodes ", compress_list(l.children_pending), '\n');
  const std::vector<std::string> header{"RANK", "PID", "PMI-STATE", "LAST-CMD", "IDLE", "FENCE"};
  std::vector<std::vector<std::string>> rows{header};
  for (const auto& r : l.ranks)
    rows.push_back({std::to_string(r.rank), std::to_string(r.pid), r.pmi_state,
                    r.last_command.empty() ? "-" : r.last_command, seconds(r.idle_ms),
                    std::to_string(r.fence_epoch)});
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i)
      line += i + 1 < row.size() ? pad(row[i], width[i] + 2) : row[i];
    out += line + '\n';
  }
  return out;
}

}  // namespace

std::string compress_list(const std::vector<int>& r) {
  std::string out;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    out += cat(out.empty() ? "" : ",", r[i]);
    if (j > i) out += cat('-', r[j]);
    i = j + 1;
  }
  return out;
}

std::string render_status(const AgentStatus& s, const std::string& only_launch) {
  std::string out = cat("lattice-agentd ", s.version, " on node ", s.node_id, ", listening on ",
                        s.listen, ", up ", seconds(s.uptime_ms), ", ", s.launches.size(),
                        s.launches.size() == 1 ? " launch\n" : " launches\n");
  bool found = only_launch.empty();
  for (const auto& l : s.launches) {
    if (!only_launch.empty() && l.launch_id != only_launch) continue;
    found = true;
    out += render_launch(l);
  }
  if (!found) return cat("error: no launch '", only_launch, "' on this agent\n");
  return out;
}

std::string handle_request(std::string_view line, AgentControl& control) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
    line.remove_suffix(1);
  auto words = split(line, ' ');
  if (!words.empty() && words[0] == "status" && words.size() <= 2)
    return render_status(control.status(), words.size() == 2 ? words[1] : "");
  return cat("error: unknown request '", line, "' (try: status [LAUNCH_ID])\n");
}

}  // namespace lattice::admin
