#include "agent/pmix_events.hpp"

#include <algorithm>
#include <csignal>
#include <set>

#include "base/strings.hpp"

namespace lattice::agent {

namespace {

// PMIx's keys (pmix_common.h), checked against it in pmix/event_upcalls.cpp's build.
constexpr const char* kCustomRange = "pmix.evrange";
constexpr const char* kCtrlKill = "pmix.jctrl.kill";
constexpr const char* kCtrlSignal = "pmix.jctrl.sig";
constexpr const char* kCtrlTerminate = "pmix.jctrl.term";
constexpr const char* kCtrlId = "pmix.jctrl.id";
constexpr const char* kCtrlPrefix = "pmix.jctrl.";

std::vector<int> all_but(int nodes, int this_node) {
  std::vector<int> out;
  for (int n = 0; n < nodes; ++n)
    if (n != this_node) out.push_back(n);
  return out;
}

int node_count(const std::vector<int>& rank_nodes) {
  int nodes = 0;
  for (int n : rank_nodes) nodes = std::max(nodes, n + 1);
  return nodes;
}

}  // namespace

Result<std::vector<int>> event_nodes(const pmix::EventNotice& notice, const std::string& nspace,
                                     const std::vector<int>& rank_nodes, int this_node) {
  using pmix::EventRange;
  const int nodes = node_count(rank_nodes);
  switch (static_cast<EventRange>(notice.range)) {
    case EventRange::local:
      return std::vector<int>{};
    case EventRange::undefined:
    case EventRange::nspace:
    case EventRange::session:
    case EventRange::global:
      return all_but(nodes, this_node);
    case EventRange::custom: {
      std::set<int> reached;
      bool named = false;
      for (const auto& v : notice.info) {
        if (v.key != kCustomRange || v.kind != pmix::InfoValue::Kind::procs) continue;
        named = true;
        for (const auto& p : v.procs) {
          if (p.nspace != nspace)
            return make_error(cat("a custom range naming ", p.nspace,
                                  " (only the launch's own ranks can be reached)"));
          if (p.rank == pmix::kRankWildcard) return all_but(nodes, this_node);
          if (p.rank >= rank_nodes.size())
            return make_error(
                cat("a custom range naming rank ", p.rank, " of ", rank_nodes.size()));
          reached.insert(rank_nodes[p.rank]);
        }
      }
      if (!named) return make_error("a custom range without PMIX_EVENT_CUSTOM_RANGE");
      reached.erase(this_node);
      return std::vector<int>(reached.begin(), reached.end());
    }
    case EventRange::rm:
      return make_error("range PMIX_RANGE_RM: Lattice has no resource-manager handler for events");
    case EventRange::proc_local:
      return make_error("range PMIX_RANGE_PROC_LOCAL stays in its process");
  }
  return make_error(cat("unknown event range ", static_cast<int>(notice.range)));
}

pmix::EventNotice launch_scoped(pmix::EventNotice notice, const std::string& nspace) {
  const auto custom = static_cast<uint8_t>(pmix::EventRange::custom);
  if (notice.range == custom) return notice;
  notice.range = custom;
  auto& info = notice.info;
  info.erase(std::remove_if(info.begin(), info.end(),
                            [](const pmix::InfoValue& v) { return v.key == kCustomRange; }),
             info.end());
  pmix::InfoValue whole;
  whole.key = kCustomRange;
  whole.pmix_type = pmix::kTypeDataArray;
  whole.kind = pmix::InfoValue::Kind::procs;
  whole.procs.push_back(pmix::ProcId{nspace, pmix::kRankWildcard});
  info.push_back(std::move(whole));
  return notice;
}

ControlPlan plan_control(const std::vector<pmix::ProcId>& targets,
                         const std::vector<pmix::InfoValue>& directives, const std::string& nspace,
                         const std::vector<int>& rank_nodes) {
  ControlPlan plan;
  auto refuse = [&](pmix::Answer answer, std::string why) {
    plan.answer = answer;
    plan.why = std::move(why);
    plan.ranks.clear();
    return plan;
  };
  int actions = 0;
  for (const auto& d : directives) {
    if (d.key == kCtrlKill || d.key == kCtrlTerminate) {
      if (d.kind != pmix::InfoValue::Kind::flag) return refuse(pmix::Answer::bad_param, d.key);
      if (d.number == 0) continue;  // "false": not asked
      plan.action = d.key == kCtrlKill ? PmixControlMessage::Action::kill
                                       : PmixControlMessage::Action::terminate;
      ++actions;
    } else if (d.key == kCtrlSignal) {
      if (d.kind != pmix::InfoValue::Kind::integer || d.number <= 0 || d.number >= 65)
        return refuse(pmix::Answer::bad_param, cat(d.key, ": not a signal number"));
      plan.action = PmixControlMessage::Action::signal;
      plan.signum = static_cast<int>(d.number);
      ++actions;
    } else if (d.key == kCtrlId) {
      continue;  // a name for the request, nothing to do
    } else if (d.key.rfind(kCtrlPrefix, 0) == 0) {
      return refuse(pmix::Answer::not_supported,
                    cat("job-control directive ", d.key, " is not supported by Lattice"));
    }
    // Anything else qualifies the request (libpmix has acted on its own cleanup directives).
  }
  if (actions == 0)
    return refuse(pmix::Answer::bad_param, "no signal, kill or terminate directive");
  if (actions > 1)
    return refuse(pmix::Answer::bad_param, "more than one of signal, kill and terminate");
  plan.signum = control_signal(plan.action, plan.signum);

  std::set<int> ranks;
  bool all = targets.empty();
  for (const auto& t : targets) {
    if (t.nspace != nspace)
      return refuse(pmix::Answer::bad_param,
                    cat("process ", t.nspace, ":", t.rank, " is not of the caller's launch"));
    if (t.rank == pmix::kRankWildcard) {
      all = true;
    } else if (t.rank >= rank_nodes.size()) {
      return refuse(pmix::Answer::not_found,
                    cat("rank ", t.rank, " of ", rank_nodes.size(), " does not exist"));
    } else {
      ranks.insert(static_cast<int>(t.rank));
    }
  }
  if (all)
    for (size_t r = 0; r < rank_nodes.size(); ++r) ranks.insert(static_cast<int>(r));
  for (int r : ranks) plan.ranks[rank_nodes[static_cast<size_t>(r)]].push_back(r);
  return plan;
}

int control_signal(PmixControlMessage::Action action, int signum) {
  switch (action) {
    case PmixControlMessage::Action::kill:
      return SIGKILL;
    case PmixControlMessage::Action::terminate:
      return SIGTERM;
    case PmixControlMessage::Action::signal:
      return signum;
  }
  return signum;
}

}  // namespace lattice::agent
