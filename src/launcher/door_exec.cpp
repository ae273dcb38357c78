#include "launcher/door_exec.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>

#include "base/clock.hpp"
#include "base/strings.hpp"
#include "config/fence_defaults.hpp"
#include "launcher/allocation_door.hpp"
#include "launcher/job.hpp"
#include "launcher/launch_request.hpp"
#include "net/loop.hpp"
#include "net/signal.hpp"

namespace lattice::launcher {
int run_in_allocation(const RemoteCommand& remote, const std::string& allocation_id) {
  MonotonicClock clock;
  auto info = ask_allocation(user_door_path(), allocation_id);
  if (!info) return not_run(cat("allocation ", allocation_id, ": ", info.error().message));
  auto nodes = door_nodes(*info, 0);
  if (!nodes) return not_run(nodes.error().message);
  // The door's node relays; the command runs on the node named (which may be the same).
  std::vector<AgentAddress> agents{nodes->front()};
  Layout layout{1, 1, {0}, 0};
  if (remote.node != agents.front().node_id) {
    auto it = std::find_if(nodes->begin(), nodes->end(),
                           [&](const AgentAddress& a) { return a.node_id == remote.node; });
    if (it == nodes->end())
      return not_run(
          cat("node '", remote.node, "' is not one of allocation ", allocation_id, "'s nodes"));
    agents.push_back(*it);
    layout = Layout{1, 2, {1}, 0};
  }
  LaunchOptions options;
  options.apps = {App{1, {}, "/bin/sh", {"-c", join(remote.command, " ")}}};
  options.nodes = layout.nodes;
  options.pmi = wire::PmiMode::none;
  options.hatch_command = true;
  options.alloc = allocation_id;
  options.launch = "tree";
  options.fanout = config::kDefaultFanout;
  auto request = job_request(options, allocation_user(*info));
  if (!request) return not_run(request.error().message);

  net::ignore_sigpipe();
  net::Loop loop;
  Job job(loop, clock, options, AgentReach{nullptr, user_door_path()}, layout, std::move(agents),
          std::move(request.value()), [&] { loop.stop(); });
  std::vector<std::unique_ptr<net::SignalWatcher>> signals;
  for (int signum : {SIGINT, SIGTERM, SIGHUP})
    signals.push_back(std::make_unique<net::SignalWatcher>(
        loop, signum, [&](int s) { job.signal(s == SIGHUP ? SIGTERM : s); }));
  job.start();
  loop.run();
  signals.clear();
  std::fputs(job.final_report().c_str(), stderr);
  return job.exit_code();
}

}  // namespace lattice::launcher
