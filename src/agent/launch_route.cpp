// A launch's reports (output, exits, stdin taken, its end) on their way from this node, held
// while there is no way up, and the backpressure a slow reader puts on the ranks' output.
#include "agent/launch_route.hpp"

#include <utility>

#include "base/log.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {
namespace {

// Output queued for a launcher beyond this (it reads slower than the ranks write) pauses the
// launch's output pipes until the queue drains: a few MB in flight keep a fast launcher busy.
constexpr size_t kOutputQueuedBytes = size_t{1} << 20;
// Output held while a node has no way up; its exits and ends are always held (a few each).
constexpr size_t kHeldReportBytes = size_t{1} << 20;
// How long a relay that has ended here keeps passing reports up for the nodes below it: every
// node reports its end or is reported lost well within this; it bounds what a node that never
// does can keep here.
constexpr uint64_t kRelayLingerMs = 60000;

}  // namespace

LaunchRoute::LaunchRoute(net::Loop& loop, Host& host, NodeLinks& peers, std::string node_id,
                         uint64_t launcher_conn)
    : loop_(loop),
      host_(host),
      peers_(peers),
      node_id_(std::move(node_id)),
      launcher_conn_(launcher_conn) {}

void LaunchRoute::attach(Launch& launch) {
  launch_ = &launch;
  if (launch.spec().relayed) relay_ = std::make_unique<LaunchRelay>(launch.spec());
}

bool LaunchRoute::relayed_all() const {
  return launch_->ended() && (!relay_ || (relay_->settled() && held_reports_.empty()));
}

bool LaunchRoute::reapable(uint64_t now) const {
  // Its policy may have ended while the launch still sweeps strays or waits for escape-hatch
  // commands: only its end, reported (ended_ms_), lets it go; before, a reap in between (a
  // closed connection, the sweeper) destroyed it unreported and its launcher waited forever.
  if (!launch_->ended() || ended_ms_ == 0) return false;
  if (relayed_all() || host_.stopping()) return true;
  if (now - ended_ms_ < kRelayLingerMs) return false;
  LAT_LOG(warn, "relay", spec().launch_id, ": no longer passing reports on (",
          relay_->settled() ? "the launcher never came for those held here"
                            : "some nodes below this one never reported their end",
          ")", log_fields({{"launch", spec().launch_id}, {"node", node_id_}}));
  return true;
}

void LaunchRoute::output(Launch& launch, int rank, bool is_stderr, std::string data) {
  report(wire::output(launch.id(), rank, is_stderr, data));
  hold_back_output();
}

void LaunchRoute::rank_exited(Launch& launch, int rank, int pid, proc::ExitStatus status) {
  report_own(wire::rank_exit({launch.id(), launch.spec().node_index, rank, pid, status}));
}

void LaunchRoute::input_taken(Launch& launch, uint64_t bytes) {
  report(wire::stdin_taken({launch.id(), launch.spec().node_index, bytes}));
}

void LaunchRoute::ask_launcher(Launch&, rpc::Outgoing request, uint64_t timeout_ms,
                               rpc::ResponseCallback answer) {
  link::Connection* conn = host_.open_connection(launcher_conn_);
  if (!conn) return answer(make_error("the launcher's link is gone"));
  conn->session().call(std::move(request), loop_.now_ms() + timeout_ms, std::move(answer));
}

void LaunchRoute::ended(Launch& launch, const wire::LaunchEnded& end) {
  ended_ms_ = loop_.now_ms();
  report_own(wire::launch_ended(end));
  LAT_LOG(info, "launch", launch.id(), ": ended",
          end.failure ? ": " + policy::describe(*end.failure) : "",
          log_fields({{"launch", launch.id()},
                      {"node", node_id_},
                      {"outcome", end.failure ? policy::kind_name(end.failure->kind) : "ok"}}));
  host_.reap_soon();
}

void LaunchRoute::hold_back_output() {
  // Output the launcher has not taken yet is held here only up to a bound; beyond it the
  // ranks wait, rather than this agent's memory growing until the link's limit ends the launch.
  link::Connection* conn = host_.open_connection(launcher_conn_);
  bool origin = !relay_ || relay_->uplink() == LaunchRelay::kOrigin;
  if (host_.stopping() || output_paused_ || !origin || !conn ||
      conn->write_queue_bytes() <= kOutputQueuedBytes)
    return;
  output_paused_ = true;
  launch_->pause_output();
  set_children_reading(false);
  conn->when_drained([host = &host_, id = launcher_conn_] { host->drained(id); });
}

void LaunchRoute::resume_output() {
  if (!std::exchange(output_paused_, false)) return;
  launch_->resume_output();
  set_children_reading(true);
}

void LaunchRoute::set_children_reading(bool reading) {
  if (!relay_) return;
  for (int child : relay_->children())
    peers_.set_reading(spec().peers[static_cast<size_t>(child)].node_id, reading);
}

void LaunchRoute::report(rpc::Outgoing message) {
  const int up = relay_ ? relay_->uplink() : LaunchRelay::kOrigin;
  if (up == LaunchRelay::kNowhere) return hold_report(std::move(message));
  if (up != LaunchRelay::kOrigin)
    return peers_.send(spec().peers[static_cast<size_t>(up)], std::move(message));
  if (link::Connection* conn = host_.open_connection(launcher_conn_))
    conn->session().notify(std::move(message));
}

void LaunchRoute::report_own(rpc::Outgoing message) {
  if (relay_ && relay_->reports_via_parent() && launch_->failing())
    peers_.send(spec().peers[static_cast<size_t>(spec().head_node)],
                wire::copy_of(message.envelope().asReader()));
  report(std::move(message));
}

void LaunchRoute::hold_report(rpc::Outgoing message) {
  const bool output = message.envelope().asReader().getBody().isOutput();
  auto frame = rpc::encode_notification(message);
  if (!frame) return;
  if (output && held_bytes_ + frame->size() > kHeldReportBytes) {
    LAT_LOG(warn, "relay", spec().launch_id, ": output dropped: no way to the launcher",
            log_fields({{"launch", spec().launch_id}, {"node", node_id_}}));
    return;
  }
  held_bytes_ += frame->size();
  held_reports_.push_back(std::move(frame.value()));
}

void LaunchRoute::adopt(const Sender& sender) {
  LAT_LOG(warn, "relay", spec().launch_id, ": its launcher reached this node directly (",
          secure::describe(sender.identity), "); reports go there now",
          log_fields(
              {{"launch", spec().launch_id}, {"node", node_id_}, {"peer", sender.identity.name}}));
  launcher_conn_ = sender.conn;
  relay_->adopted();
  link::Connection* conn = host_.open_connection(sender.conn);
  for (auto& frame : std::exchange(held_reports_, {}))
    if (conn) conn->session().send_encoded(std::move(frame));
  held_bytes_ = 0;
}

}  // namespace lattice::agent
