// `lattice admin status --json`: the agent's state for programs (a cluster view, monitoring).
#include <nlohmann/json.hpp>

#include "admin/status.hpp"
#include "base/strings.hpp"

namespace lattice::admin {
namespace {

using nlohmann::json;

json launch_json(const LaunchRow& l) {
  json ranks = json::array();
  for (const auto& r : l.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"pmi_state", r.pmi_state},
                     {"last_command", r.last_command},
                     {"idle_ms", r.idle_ms},
                     {"fence_epoch", r.fence_epoch}});
  json fences = json::array();
  for (const auto& f : l.last_fence)
    fences.push_back({{"epoch", f.epoch},
                      {"entered_us", f.entered_us},
                      {"reduced_us", f.reduced_us},
                      {"store_us", f.store_us},
                      {"released_us", f.released_us}});
  return {{"launch_id", l.launch_id},
          {"node_index", l.node_index},
          {"nnodes", l.nnodes},
          {"world_size", l.world_size},
          {"fence_epoch", l.fence_epoch},
          {"fence_waiting_for", l.fence_waiting_for},
          {"children_pending", l.children_pending},
          {"age_ms", l.age_ms},
          {"ranks", std::move(ranks)},
          {"last_fence", std::move(fences)}};
}

json allocation_json(const AllocationRow& a) {
  return {{"id", a.id},         {"user", a.user},
          {"uid", a.uid},       {"node_index", a.node_index},
          {"nnodes", a.nnodes}, {"remaining_ms", a.remaining_ms},
          {"ending", a.ending}, {"launches", a.launches},
          {"limits", a.limits}};
}

}  // namespace

std::string render_status_json(const AgentStatus& s, const std::string& only_launch) {
  json launches = json::array();
  for (const auto& l : s.launches)
    if (only_launch.empty() || l.launch_id == only_launch) launches.push_back(launch_json(l));
  if (!only_launch.empty() && launches.empty())
    return cat("error: no launch '", printable(only_launch), "' on this agent\n");
  json allocations = json::array();
  for (const auto& a : s.allocations) allocations.push_back(allocation_json(a));
  json out = {{"version", s.version},
              {"node_id", s.node_id},
              {"listen", s.listen},
              {"uptime_ms", s.uptime_ms},
              {"draining", s.draining},
              {"messages_sent", s.messages_sent},
              {"messages_received", s.messages_received},
              {"peer_links", s.peer_links},
              {"peer_links_held", s.peer_links_held},
              {"open_links", s.open_links},
              {"launches", std::move(launches)},
              {"allocations", std::move(allocations)}};
  // A rank's bytes are not always UTF-8: replaced, never an exception on the agent's loop; and
  // all in ASCII (\uXXXX beyond it), as every admin answer is, for clients that print it raw.
  return out.dump(-1, ' ', true, json::error_handler_t::replace) + '\n';
}

}  // namespace lattice::admin
