// Reports and commands on a relayed launch's links, handed to the launch's route
// (launch_route.hpp) once the launch is found.
#include "agent/agent.hpp"
#include "base/log.hpp"

namespace lattice::agent {

void Agent::pass_up(const Sender& sender, schema::Envelope::Reader envelope) {
  auto what = report_about(envelope);
  if (!what) return;
  LaunchEntry* entry = find_launch(what->launch_id);
  if (!entry || !entry->route->relayed()) {
    LAT_LOG(debug, "relay", "a report for launch ", what->launch_id, " from ",
            secure::describe(sender.identity), " dropped: no relayed launch of that id here");
    return;
  }
  entry->route->pass_up(sender, *what, envelope);
}

void Agent::pass_down(const Sender& sender, const std::string& launch_id,
                      schema::Envelope::Reader envelope) {
  if (LaunchEntry* entry = find_launch(launch_id)) entry->route->pass_down(sender.conn, envelope);
}

}  // namespace lattice::agent
