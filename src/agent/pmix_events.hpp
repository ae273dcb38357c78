// What PMIx events and job control mean for a launch's nodes, as pure functions (the wire-up in
// pmix_wire_up.cpp carries them out): the nodes an event's range reaches, and the ranks a
// job-control request acts on, node by node, or why it is refused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/pmix_messages.hpp"
#include "base/result.hpp"
#include "pmix/server.hpp"

namespace lattice::agent {

// The other nodes (by index) that a rank's event of `notice.range` must reach: none for
// PMIX_RANGE_LOCAL, every other node for namespace, session, global (the launch is its own
// session), the target ranks' nodes for a custom range of the launch's own ranks; an error for
// a range Lattice does not carry (rm, proc_local, a custom range beyond the launch).
Result<std::vector<int>> event_nodes(const pmix::EventNotice& notice, const std::string& nspace,
                                     const std::vector<int>& rank_nodes, int this_node);

// `notice` as this node hands it to libpmix: for the launch's own ranks only. libpmix 4.2.2
// checks a range against each client only when the event names its targets
// (PMIX_EVENT_CUSTOM_RANGE), and hands any other event to every client of the server, other
// launches' included; so every event is given the custom range of the launch's namespace (a
// custom range keeps its own targets, which event_nodes() has checked are the launch's).
pmix::EventNotice launch_scoped(pmix::EventNotice notice, const std::string& nspace);

// A PMIx_Job_control request as the launch's nodes carry it out.
struct ControlPlan {
  pmix::Answer answer = pmix::Answer::success;  // anything else: refused, for `why`
  std::string why;
  PmixControlMessage::Action action = PmixControlMessage::Action::signal;
  int signum = 0;                         // what the targets get
  std::map<int, std::vector<int>> ranks;  // node index -> its target ranks
};

// `targets` empty or a wildcard: every rank of the namespace. Only the launch's own ranks
// (namespace `nspace`) may be named.
ControlPlan plan_control(const std::vector<pmix::ProcId>& targets,
                         const std::vector<pmix::InfoValue>& directives, const std::string& nspace,
                         const std::vector<int>& rank_nodes);

// The signal an action sends.
int control_signal(PmixControlMessage::Action action, int signum);

}  // namespace lattice::agent
