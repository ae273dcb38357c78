#include "launcher/layout.hpp"

#include <algorithm>

namespace lattice::launcher {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

Result<Layout> make_layout(const LaunchOptions& o, int available_agents, int node_cpus) {
  Layout layout;
  int t = o.tasks_per_node;
  const int ntasks = o.ntasks();
  const int c = o.cpus_per_task;
  // Ranks of -c CPUs a node holds, where its CPUs are known (0: no limit known).
  const int fit = c > 0 && node_cpus > 0 ? node_cpus / c : 0;
  if (c > 0 && node_cpus > 0 && fit == 0)
    return make_error(
        cat("-c ", c, ": a rank of ", c, " CPUs does not fit a node of ", node_cpus, " CPUs"));
  // Nodes: as asked; else as many as the tasks per node imply; else, with agents given, one
  // per rank up to the agents available; else as many as the ranks' CPUs fill; else one.
  int nodes = o.nodes;
  if (nodes == 0) {
    if (t > 0 && ntasks > 0)
      nodes = ceil_div(ntasks, t);
    else if (available_agents > 0)
      nodes = std::min(available_agents, std::max(ntasks, 1));
    else if (fit > 0 && ntasks > 0)
      nodes = ceil_div(ntasks, fit);
    else
      nodes = 1;
  }
  if (available_agents > 0 && nodes > available_agents)
    return make_error(cat("the layout needs ", nodes, " nodes but only ", available_agents,
                          " agents were given"));
  int n = ntasks > 0 ? ntasks : (t > 0 ? nodes * t : nodes);
  if (t > 0 && static_cast<long>(nodes) * t < n)
    return make_error(cat(n, " ranks do not fit on ", nodes, " nodes at ", t, " per node"));
  if (nodes > n)
    return make_error(cat(nodes, " nodes for ", n, " ranks would leave nodes without ranks"));

  layout.ntasks = n;
  layout.nodes = nodes;
  layout.rank_nodes.resize(static_cast<size_t>(n));
  if (o.distribution == Distribution::cyclic) {
    for (int r = 0; r < n; ++r) layout.rank_nodes[static_cast<size_t>(r)] = r % nodes;
  } else if (t > 0) {  // node i gets ranks i*T .. i*T+T-1; the last nodes may get fewer
    for (int r = 0; r < n; ++r) layout.rank_nodes[static_cast<size_t>(r)] = r / t;
    if (layout.rank_nodes.back() != nodes - 1)
      return make_error(cat("with ", t, " ranks per node, ", n, " ranks fill only ",
                            layout.rank_nodes.back() + 1, " of ", nodes, " nodes"));
  } else {  // balanced blocks: the first n % nodes nodes get one rank more
    int base = n / nodes, extra = n % nodes, r = 0;
    for (int node = 0; node < nodes; ++node)
      for (int k = 0; k < base + (node < extra ? 1 : 0); ++k)
        layout.rank_nodes[static_cast<size_t>(r++)] = node;
  }
  if (fit > 0) {
    std::vector<int> per_node(static_cast<size_t>(nodes), 0);
    for (int node : layout.rank_nodes) ++per_node[static_cast<size_t>(node)];
    const int most = *std::max_element(per_node.begin(), per_node.end());
    if (most > fit)
      return make_error(cat(most, " ranks of ", c, " CPUs (-c ", c, ") on one node need ", most * c,
                            " CPUs, but a node has ", node_cpus));
  }
  return layout;
}

}  // namespace lattice::launcher
