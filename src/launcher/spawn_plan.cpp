#include "launcher/spawn_plan.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::launcher {

Result<SpawnPlan> spawn_plan(const LaunchOptions& parent, const std::vector<std::string>& node_ids,
                             const wire::SpawnRequest& request) {
  SpawnPlan plan;
  for (const auto& host : request.hosts) {
    auto it = std::find(node_ids.begin(), node_ids.end(), host);
    if (it == node_ids.end())
      return make_error(
          cat("host '", host, "' is not one of the launch's nodes (", join(node_ids, ","), ")"));
    plan.nodes.push_back(static_cast<int>(it - node_ids.begin()));
  }
  if (plan.nodes.empty())
    for (int node = 0; node < static_cast<int>(node_ids.size()); ++node) plan.nodes.push_back(node);
  std::sort(plan.nodes.begin(), plan.nodes.end());

  LaunchOptions& o = plan.options;
  o = parent;
  o.apps.clear();
  int procs = 0;
  for (const auto& app : request.apps) {
    App a;
    a.ntasks = static_cast<int>(app.size);
    a.program = app.entrypoint;
    a.args = app.args;
    a.env = app.env;
    procs += a.ntasks;
    o.apps.push_back(std::move(a));
  }
  // As many nodes as there are children at most: a node of the launch holds at least one.
  if (static_cast<int>(plan.nodes.size()) > procs) plan.nodes.resize(static_cast<size_t>(procs));
  o.nodes = static_cast<int>(plan.nodes.size());
  o.tasks_per_node = 0;
  o.distribution = Distribution::block;
  o.pmi = wire::PmiMode::pmix;  // PMIx_Spawn's children are PMIx clients
  if (!request.workdir.empty()) o.chdir = request.workdir;
  o.input_rank = kInputNone;  // the parent's stdin stays the parent's
  o.output.clear();           // the parent's --output files stay the parent's
  o.error.clear();
  o.nodelist.clear();
  o.exclude.clear();
  o.hostfile.clear();
  o.multi_prog = false;
  o.configfile.clear();
  o.global_env.clear();
  o.exclusive = false;  // beside the parent, whose nodes these are
  auto layout = make_layout(o, o.nodes);
  if (!layout) return layout.error();
  plan.layout = std::move(layout.value());
  return plan;
}

}  // namespace lattice::launcher
