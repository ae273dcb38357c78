// Where a launch's reports go (output, exits, stdin taken, its end): back on the link the
// launch came on, up a relayed launch's tree, or held while it has no way up; and the
// backpressure that a slow reader of them puts on the ranks' output.
#include <utility>

#include "agent/agent.hpp"
#include "base/log.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {
namespace {

// Output queued for a launcher beyond this (it reads slower than the ranks write) pauses the
// launch's output pipes until the queue drains: a few MB in flight keep a fast launcher busy.
constexpr size_t kOutputQueuedBytes = size_t{1} << 20;
// Output held while a node has no way up; its exits and ends are always held (a few each).
constexpr size_t kHeldReportBytes = size_t{1} << 20;

}  // namespace

void Agent::output(LaunchEntry& entry, int rank, bool is_stderr, std::string data) {
  report(entry, wire::output(entry.launch->id(), rank, is_stderr, data));
  hold_back_output(entry);
}

void Agent::hold_back_output(LaunchEntry& entry) {
  // Output the launcher has not taken yet is held here only up to a bound; beyond it the
  // ranks wait, rather than this agent's memory growing until the link's limit ends the launch.
  auto it = connections_.find(entry.launcher_conn);
  bool origin = !entry.relay || entry.relay->uplink() == LaunchRelay::kOrigin;
  if (shutting_down_ || entry.output_paused || !origin || it == connections_.end() ||
      it->second->write_queue_bytes() <= kOutputQueuedBytes)
    return;
  entry.output_paused = true;
  entry.launch->pause_output();
  set_children_reading(entry, false);
  it->second->when_drained([this, conn = entry.launcher_conn] {
    for (auto& [id, e] : launches_)
      if (e.launcher_conn == conn) resume_output(e);
  });
}

void Agent::resume_output(LaunchEntry& entry) {
  if (!std::exchange(entry.output_paused, false)) return;
  entry.launch->resume_output();
  set_children_reading(entry, true);
}

void Agent::set_children_reading(LaunchEntry& entry, bool reading) {
  if (!entry.relay) return;
  for (int child : entry.relay->children())
    peers_.set_reading(entry.launch->spec().peers[static_cast<size_t>(child)].node_id, reading);
}

void Agent::report(LaunchEntry& entry, rpc::Outgoing message) {
  const int up = entry.relay ? entry.relay->uplink() : LaunchRelay::kOrigin;
  if (up == LaunchRelay::kOrigin) return notify(entry.launcher_conn, std::move(message));
  if (up == LaunchRelay::kNowhere) return hold_report(entry, std::move(message));
  peers_.send(entry.launch->spec().peers[static_cast<size_t>(up)], std::move(message));
}

void Agent::report_own(LaunchEntry& entry, rpc::Outgoing message) {
  if (entry.relay && entry.relay->reports_via_parent() && entry.launch->failing()) {
    const LaunchSpec& spec = entry.launch->spec();
    peers_.send(spec.peers[static_cast<size_t>(spec.head_node)],
                wire::copy_of(message.envelope().asReader()));
  }
  report(entry, std::move(message));
}

void Agent::input_taken(LaunchEntry& entry, uint64_t bytes) {
  const Launch& launch = *entry.launch;
  report(entry, wire::stdin_taken({launch.id(), launch.spec().node_index, bytes}));
}

void Agent::rank_exited(LaunchEntry& entry, int rank, int pid, proc::ExitStatus status) {
  const Launch& launch = *entry.launch;
  report_own(entry, wire::rank_exit({launch.id(), launch.spec().node_index, rank, pid, status}));
}

void Agent::ended(LaunchEntry& entry, const wire::LaunchEnded& end) {
  const Launch& launch = *entry.launch;
  entry.ended_ms = loop_.now_ms();
  report_own(entry, wire::launch_ended(end));
  LAT_LOG(info, "launch", launch.id(), ": ended",
          end.failure ? ": " + policy::describe(*end.failure) : "");
  reaper_.start(0, 0, [this] { reap(); });
}

void Agent::hold_report(LaunchEntry& entry, rpc::Outgoing message) {
  const bool output = message.envelope().asReader().getBody().isOutput();
  auto frame = rpc::encode_notification(message);
  if (!frame) return;
  if (output && entry.held_bytes + frame->size() > kHeldReportBytes) {
    LAT_LOG(warn, "relay", entry.launch->id(), ": output dropped: no way to the launcher");
    return;
  }
  entry.held_bytes += frame->size();
  entry.held_reports.push_back(std::move(frame.value()));
}

void Agent::adopt(LaunchEntry& entry, const Sender& sender) {
  LAT_LOG(warn, "relay", entry.launch->id(), ": its launcher reached this node directly (",
          secure::describe(sender.identity), "); reports go there now");
  entry.launcher_conn = sender.conn;
  entry.relay->adopted();
  rpc::Session* session = session_of(sender.conn);
  for (auto& frame : std::exchange(entry.held_reports, {})) session->send_encoded(std::move(frame));
  entry.held_bytes = 0;
}

}  // namespace lattice::agent
