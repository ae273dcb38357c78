#include "launcher/report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "base/strings.hpp"
#include "proc/exit_status.hpp"

namespace lattice::launcher {

std::string format_stragglers(std::vector<Straggler> stragglers) {
  if (stragglers.empty()) return "";
  std::sort(stragglers.begin(), stragglers.end(),
            [](const Straggler& a, const Straggler& b) { return a.rank < b.rank; });
  std::string out = "lattice: straggler report: ranks that never entered the fence:\n";
  for (const auto& s : stragglers) {
    std::string last = s.last_command.empty() ? std::string("no PMI command yet")
                                              : cat("last PMI command '", s.last_command, "' ",
                                                    s.idle_ms / 100 / 10.0, " s ago");
    out += cat("lattice:   rank ", s.rank, " on ", s.node, ": ", s.pmi_state, ", ", last, '\n');
  }
  return out;
}

int job_exit_code(const std::optional<JobFailure>& failure, const std::map<int, RankResult>& ranks,
                  int world_size) {
  if (failure) return failure->exit_code != 0 ? failure->exit_code : 1;
  if (static_cast<int>(ranks.size()) < world_size) return 1;
  for (const auto& [rank, result] : ranks)
    if (result.code != 0 || result.signal != 0)
      return proc::job_exit_code(proc::ExitStatus{result.code, result.signal});
  return 0;
}

std::string summarize_exits(const std::map<int, RankResult>& ranks,
                            const std::vector<int>& rank_nodes,
                            const std::vector<bool>& node_settled) {
  std::map<std::string, std::vector<int>> groups;  // outcome -> ranks
  for (int rank = 0; rank < static_cast<int>(rank_nodes.size()); ++rank) {
    auto it = ranks.find(rank);
    auto node = static_cast<size_t>(rank_nodes[static_cast<size_t>(rank)]);
    bool settled = node < node_settled.size() && node_settled[node];
    std::string outcome =
        it == ranks.end() ? (settled ? "not started" : "no exit status")
        : (it->second.code == 0 && it->second.signal == 0)
            ? "exited 0"
            : proc::describe(proc::ExitStatus{it->second.code, it->second.signal,
                                              it->second.out_of_memory, it->second.memory_limit});
    groups[outcome].push_back(rank);
  }
  std::string out;
  for (const auto& [outcome, list] : groups)
    out += cat(out.empty() ? "" : "; ", list.size() == 1 ? "rank " : "ranks ",
               compress_ranges(list), ": ", outcome);
  return out;
}

std::string label_lines(const std::string& label, int rank, const std::string& data,
                        bool& at_start) {
  std::string prefix = cat(label, rank, ": ");
  std::string out;
  out.reserve(data.size() + prefix.size() * 2);
  for (char c : data) {
    if (at_start) out += prefix;
    out += c;
    at_start = c == '\n';
  }
  return out;
}

std::string format_timings(const Timings& t) {
  auto ms = [](double v) {
    if (v < 0) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", v);
    return std::string(buf);
  };
  // Phases only some launches have are left out of the others' lines.
  auto optional = [&](const char* name, double v) {
    return v < 0 ? std::string() : cat(", ", name, ' ', ms(v));
  };
  return cat("lattice: timing: resolve ", ms(t.resolve), " before; connect ", ms(t.connect),
             optional("CXI credentials", t.credentials), ", requests sent ", ms(t.sent),
             ", fan-out ", ms(t.fan_out), optional("user looked up", t.user_lookup), ", spawn ",
             ms(t.spawn), ", first PMI init ", ms(t.first_init), ", last finalize ",
             ms(t.last_finalize), ", exit ", ms(t.exit), ", total ", ms(t.total), '\n');
}

double agent_clock_origin_ms(double sent_ms, double accepted_ms, double replied_ms) {
  const double latest = accepted_ms - replied_ms;
  return latest > sent_ms ? (sent_ms + latest) / 2 : sent_ms;
}

std::string format_fence_phases(const std::vector<NodeFence>& fences) {
  struct Phase {
    double at = -1;
    std::string node;
  };
  struct Fence {
    Phase entered, reduced, store, released;
  };
  std::map<uint64_t, Fence> by_epoch;
  auto latest = [](Phase& p, double at, const std::string& node) {
    if (at > p.at) p = Phase{at, node};
  };
  for (const auto& f : fences) {
    Fence& x = by_epoch[f.epoch];
    latest(x.entered, f.entered, f.node);
    latest(x.reduced, f.reduced, f.node);
    latest(x.store, f.store, f.node);
    latest(x.released, f.released, f.node);
  }
  auto critical = [](const Fence& f) {
    return f.released.at >= 0 && f.entered.at >= 0 ? f.released.at - f.entered.at : -1.0;
  };
  std::vector<uint64_t> shown;
  for (const auto& [epoch, f] : by_epoch) shown.push_back(epoch);
  if (shown.size() > 3) {
    uint64_t slowest = shown.front();
    for (uint64_t e : shown)
      if (critical(by_epoch[e]) > critical(by_epoch[slowest])) slowest = e;
    uint64_t last = shown.back();
    shown = slowest == last ? std::vector<uint64_t>{last} : std::vector<uint64_t>{slowest, last};
  }
  auto phase = [](const char* name, const Phase& p) {
    if (p.at < 0) return std::string();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f ms", p.at);
    return cat(", ", name, ' ', buf, " (", p.node, ')');
  };
  std::string out;
  for (uint64_t e : shown) {
    const Fence& f = by_epoch[e];
    char path[64] = "-";
    if (critical(f) >= 0) std::snprintf(path, sizeof path, "%.2f ms", critical(f));
    out +=
        cat("lattice: fence ", e,
            by_epoch.size() > 3 && e != by_epoch.rbegin()->first ? " (slowest)" : "",
            ": critical path ", path, phase("last rank in", f.entered), phase("merged", f.reduced),
            phase("store in", f.store), phase("released", f.released), '\n');
  }
  if (by_epoch.size() > shown.size())
    out += cat("lattice: fences: ", by_epoch.size(), " timed (", by_epoch.begin()->first, " to ",
               by_epoch.rbegin()->first, ")\n");
  return out;
}

}  // namespace lattice::launcher
