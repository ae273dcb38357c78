// The tables (see tables.hpp). Each size runs every fanout; smaller powers of two are simulated
// too, only to find from which size on a tree beats the star.
#include "tables.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "calibrate.hpp"
#include "fence_sim.hpp"
#include "launch_sim.hpp"

namespace lattice::sim {
namespace {

const std::vector<int> kFanouts{2, 8, 32, 0};  // 0: star (the tables' column order)
constexpr double kFenceBudgetMs = 20, kFenceGoalMs = 10, kLaunchBudgetMs = 100;
constexpr int kGoalNodes = 4096;
constexpr int kLargestScanned = 512;  // below the tables: powers of two from 4
// auto method: full while all nodes' stores, with the strings' overhead, stay under this.
constexpr double kFullMethodBytes = 2.0 * (1u << 30);

using Times = std::map<int, std::vector<double>>;  // nodes -> µs per kFanouts entry

std::string ms(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us < 10000 ? "%.2f" : "%.1f", us / 1000);
  return buf;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Best {
  double us = -1;
  int fanout = 0;
};
// The fastest tree of a row; a fanout that makes a star at this size does not count.
Best best_tree(int nodes, const std::vector<double>& row) {
  Best b;
  for (size_t i = 0; i < kFanouts.size(); ++i)
    if (kFanouts[i] && kFanouts[i] < nodes - 1 && (b.us < 0 || row[i] < b.us))
      b = {row[i], kFanouts[i]};
  return b;
}

void print_verdicts(const char* what, const Times& times, double goal_ms) {
  int from = 0;
  for (const auto& [nodes, row] : times) {
    const Best b = best_tree(nodes, row);
    const bool wins = b.us >= 0 && b.us < row.back();
    if (wins && !from) from = nodes;
    if (!wins) from = 0;
  }
  if (from)
    std::printf(
        "- %s: the best tree beats the star from %d nodes on (powers of two from 4, and "
        "every size above).\n",
        what, from);
  else
    std::printf("- %s: the star still wins at %d nodes.\n", what, times.rbegin()->first);
  if (auto goal = times.find(kGoalNodes); goal != times.end()) {
    const Best b = best_tree(kGoalNodes, goal->second);
    const double star = goal->second.back();
    std::printf(
        "- %s, goal at %d nodes (<= %.0f ms): best tree (fanout %d) %s ms: %s; the star %s "
        "ms: %s.\n",
        what, kGoalNodes, goal_ms, b.fanout, ms(b.us).c_str(),
        b.us <= goal_ms * 1000 ? "met" : "NOT met", ms(star).c_str(),
        star <= goal_ms * 1000 ? "met" : "NOT met");
  }
}

FenceSetup fence_setup(const Options& o, int nodes, int fanout) {
  FenceSetup s;
  s.nodes = nodes;
  s.fanout = fanout ? fanout : nodes - 1;
  s.ranks_per_node = o.ranks_per_node;
  s.value_bytes = o.value_bytes;
  s.chunk_bytes = o.chunk_bytes;
  const double keys = static_cast<double>(nodes) * o.ranks_per_node;
  const double need = nodes * keys * (static_cast<double>(o.value_bytes) + 100);
  const bool full = o.method == "full" || (o.method == "auto" && need <= kFullMethodBytes);
  s.method = full ? FenceMethod::full : FenceMethod::hollow;
  return s;
}

LaunchSetup launch_setup(const Options& o, int agents, int fanout, bool warm,
                         const RequestCost& cost) {
  LaunchSetup s;
  s.agents = agents;
  s.fanout = fanout;
  s.ranks_per_node = o.ranks_per_node;
  s.warm_links = warm;
  s.request_bytes = cost.bytes;
  s.encode_us = cost.encode_us;
  s.decode_us = cost.decode_us;
  return s;
}

}  // namespace

void print_params(const Model& model, const std::vector<Param>& params, const Options& o) {
  std::printf(
      "\n### Simulation model (issue 11 part 6)\n\n| parameter | value | source |\n"
      "|---|---|---|\n");
  for (const auto& p : params)
    std::printf("| %s | %.4g %s | %s |\n", p.name, model.*p.field, p.unit, p.source.c_str());
  std::printf(
      "| ranks per node | %d | --ranks-per-node |\n| value per rank | %zu B, key "
      "\"f1-RANK\" | --value-bytes (pmi2_client --fence-bench: 64) |\n| fence chunk "
      "| %zu B | fence::kDefaultChunkBytes (--chunk-bytes) |\n",
      o.ranks_per_node, o.value_bytes, o.chunk_bytes);
  std::printf(
      "\nEach node has one CPU that does its work in arrival order (the per-message, per-byte and "
      "per-key costs above) and one NIC that sends, and receives, at the bandwidth one message "
      "after another; each hop adds the latency. The fence runs the real fence::Reducer of "
      "every node (src/fence); the launch uses the real request codecs' size and CPU at each "
      "size. Measurements are this thread's CPU time (medians), so a busy machine does not "
      "inflate them.\n");
}

void print_fence(const Model& model, const Options& o) {
  Times times;
  for (int n = 4; n <= kLargestScanned; n *= 2)
    for (int k : kFanouts) times[n].push_back(simulate_fence(model, fence_setup(o, n, k)).time_us);

  std::printf(
      "\n### Predicted fence, last rank in -> last rank out (ms)\n\n"
      "| nodes | fanout 2 | fanout 8 | fanout 32 | star | budget | store | down chunks "
      "| method | simulated in |\n|---|---|---|---|---|---|---|---|---|---|\n");
  std::string details;
  for (int n : o.sizes) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double>& row = times[n];
    row.clear();
    FenceResult r;
    FenceSetup setup;
    for (int k : kFanouts) {
      setup = fence_setup(o, n, k);
      r = simulate_fence(model, setup);
      row.push_back(r.time_us);
      char line[256];
      std::snprintf(line, sizeof line, "| %d | %s | %d | %s | %s | %s | %llu | %.0f |\n", n,
                    k ? std::to_string(k).c_str() : "star", r.depth, ms(r.root_in_us).c_str(),
                    ms(r.time_us - r.root_in_us).c_str(), ms(r.time_us).c_str(),
                    static_cast<unsigned long long>(r.messages), r.bytes / 1e6);
      details += line;
    }
    std::printf(
        "| %d | %s | %s | %s | %s | %.0f ms (tree, 1000+ nodes) | %zu keys, %.2f MB "
        "| %u | %s | %.1f s |\n",
        n, ms(row[0]).c_str(), ms(row[1]).c_str(), ms(row[2]).c_str(), ms(row[3]).c_str(),
        kFenceBudgetMs, r.store_keys, fence_store_bytes(setup) / 1e6, r.down_chunks,
        setup.method == FenceMethod::full ? "full" : "hollow", seconds_since(t0));
  }
  std::printf(
      "\nmethod: full = every chunk carries its entries to every node; hollow = the merged "
      "store's chunks travel down as (epoch, index, count) with the sizes measured at the root "
      "(the Reducer's downward path reads nothing else, so it acts the same; the unit tests "
      "check hollow against full). The way up carries the real data in both.\n"
      "\n#### Where the fence's time goes\n\n| nodes | fanout | depth | up: root has everything "
      "(ms) | down (ms) | total (ms) | messages | MB on the wire |\n"
      "|---|---|---|---|---|---|---|---|\n%s\n",
      details.c_str());
  print_verdicts("fence", times, kFenceGoalMs);
  if (o.isolated_key_us > 0) {
    // The same goal with the per-key cost of a node whose agent has cores of its own.
    Model own = model;
    own.key_recv_us = o.isolated_key_us;
    std::vector<double> row;
    for (int k : kFanouts)
      row.push_back(simulate_fence(own, fence_setup(o, kGoalNodes, k)).time_us);
    const Best b = best_tree(kGoalNodes, row);
    std::printf(
        "- fence, goal at %d nodes with key_recv_us at a leaf's whole receive path in isolation "
        "(%.3f µs, calibrated now: a node whose agent is not one of 512 processes on 2 cores): "
        "best tree (fanout %d) %s ms: %s.\n",
        kGoalNodes, o.isolated_key_us, b.fanout, ms(b.us).c_str(),
        b.us <= kFenceGoalMs * 1000 ? "met" : "NOT met");
  }
}

void print_launch(const Model& model, const Options& o) {
  std::map<int, RequestCost> costs;  // measured once per size, shared by both tables
  auto cost_of = [&](int n) -> const RequestCost& {
    auto it = costs.find(n);
    if (it == costs.end()) it = costs.emplace(n, measure_request(n, o.ranks_per_node)).first;
    return it->second;
  };
  for (bool warm : {false, true}) {
    Times times;
    double launcher_star = 0;
    auto run = [&](int n) {
      std::vector<double> row;
      for (int k : kFanouts) {
        const LaunchResult r = simulate_launch(model, launch_setup(o, n, k, warm, cost_of(n)));
        row.push_back(r.time_us);
        if (!k) launcher_star = r.launcher_cpu_us;
      }
      times[n] = row;
    };
    for (int n = 4; n <= kLargestScanned; n *= 2) run(n);
    std::printf(
        "\n### Predicted launch fan-out, launcher start -> every agent spawned (ms), %s\n\n"
        "| nodes | one agent's request (real codecs) | star | fanout 2 | fanout 8 "
        "| fanout 32 | budget | launcher CPU, star |\n|---|---|---|---|---|---|---|---|\n",
        warm ? "links already up (no connect or handshake at launch)"
             : "fresh links: each hop connects and handshakes first (as lattice launch does)");
    for (int n : o.sizes) {
      run(n);
      const RequestCost& c = cost_of(n);
      const std::vector<double>& row = times[n];
      std::printf(
          "| %d | %.0f KB, encode %.0f µs, decode %.0f µs | %s | %s | %s | %s | %.0f ms "
          "| %s ms |\n",
          n, c.bytes / 1e3, c.encode_us, c.decode_us, ms(row[3]).c_str(), ms(row[0]).c_str(),
          ms(row[1]).c_str(), ms(row[2]).c_str(), kLaunchBudgetMs, ms(launcher_star).c_str());
    }
    std::printf("\n");
    print_verdicts(warm ? "launch, warm links" : "launch, fresh links", times, kLaunchBudgetMs);
  }
  std::printf(
      "\nThe star: the launcher encodes and sends every agent its request. Relayed (lattice "
      "launch --launch tree; the fanout columns): the launcher sends the head its request, and "
      "each agent copies it once per child (the encode column, paid by every sender) before it "
      "spawns; the peers travel as host lists, so a request's size barely grows with the nodes "
      "(what an agent's decode still gains with them is the rank layout's). "
      "Fresh links are `lattice launch`, a new process per launch; warm links a launcher that "
      "stays up and keeps its links (lattice-api's role), where the star's cost is the requests "
      "alone, not a handshake per node. "
      "The design's budget is ~100 ms at 256 nodes; the goal is 100 ms at %d.\n",
      kGoalNodes);
}

}  // namespace lattice::sim
