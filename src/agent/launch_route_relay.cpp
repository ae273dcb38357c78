// A relayed launch's part of its route (launch_relay.hpp): the request on to the children,
// their answers and reports up, what the launcher sends down, and losses on either side.
#include <utility>

#include "agent/launch_route.hpp"
#include "base/log.hpp"
#include "wire/failure_codec.hpp"
#include "wire/launch_request.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {
namespace {

// A child that neither answers its request nor is found lost within this is reported lost
// (under the launcher's own deadline for every node, so its parent says so first).
constexpr uint64_t kChildAnswerMs = 10000;

// A child's answer to its request as this node passes it up: its LaunchAccepted, or why there
// is none (`lost`: the child was lost rather than refused).
wire::NodeAnswer node_answer(const std::string& launch_id, int child,
                             const Result<schema::Envelope::Reader>& reply, bool lost) {
  wire::NodeAnswer answer{launch_id, child, {}, {}, false};
  if (!reply) {
    answer.error = reply.error().message;
    answer.lost = lost;
  } else if (reply->getBody().isLaunchAccepted()) {
    answer.accepted = wire::decode_accepted(reply->getBody().getLaunchAccepted());
  }
  return answer;
}

}  // namespace

std::optional<ReportAbout> report_about(schema::Envelope::Reader envelope) {
  auto body = envelope.getBody();
  switch (body.which()) {
    case schema::Envelope::Body::OUTPUT:
      return ReportAbout{body.getOutput().getLaunchId(), -1,
                         static_cast<int>(body.getOutput().getRank())};
    case schema::Envelope::Body::RANK_EXIT:
      return ReportAbout{body.getRankExit().getLaunchId(),
                         static_cast<int>(body.getRankExit().getNodeIndex()),
                         static_cast<int>(body.getRankExit().getRank())};
    case schema::Envelope::Body::LAUNCH_ENDED:
      return ReportAbout{body.getLaunchEnded().getLaunchId(),
                         static_cast<int>(body.getLaunchEnded().getNodeIndex())};
    case schema::Envelope::Body::STDIN_TAKEN:
      return ReportAbout{body.getStdinTaken().getLaunchId(),
                         static_cast<int>(body.getStdinTaken().getNodeIndex())};
    case schema::Envelope::Body::NODE_ANSWER:
      return ReportAbout{body.getNodeAnswer().getLaunchId(),
                         static_cast<int>(body.getNodeAnswer().getNodeIndex())};
    default:
      return std::nullopt;  // nothing else comes up a relayed launch's links
  }
}

void LaunchRoute::relay_request(schema::LaunchProcessesRequest::Reader request) {
  // Copied out once: every read of the received message counts against its traversal limit,
  // which a copy per child would exhaust at a fanout of 8.
  rpc::Outgoing own = wire::relayed_request(request, spec().node_index);
  auto source = own.envelope().asReader().getBody().getLaunchProcesses();
  for (int child : relay_->children()) {
    Peer p = spec().peers[static_cast<size_t>(child)];
    child_holds_.push_back(peers_.hold(p, true));
    peers_.call(p, wire::relayed_request(source, child), kChildAnswerMs,
                [this, alive = std::weak_ptr<int>(alive_), child](auto reply) {
                  if (!alive.expired()) child_answered(child, reply);
                });
  }
}

void LaunchRoute::child_answered(int child, const Result<schema::Envelope::Reader>& reply) {
  const bool lost = !reply && reply.error().kind != ErrorKind::refused;
  if (reply) {
    relay_->accepted(child);
  } else if (!lost) {
    relay_->refused(child);
  } else if (!relay_->lost(child)) {
    return;  // reported lost already, when its link went
  }
  report(wire::node_answer(node_answer(spec().launch_id, child, reply, lost)));
  if (relayed_all()) host_.reap_soon();
}

void LaunchRoute::pass_up(const Sender& sender, const ReportAbout& what,
                          schema::Envelope::Reader envelope) {
  auto body = envelope.getBody();
  int about = what.node;
  if (what.rank >= 0) {
    // A rank's report is about the node the layout puts it on, and only that node's.
    if (what.rank >= spec().world_size ||
        (about >= 0 && spec().rank_nodes[size_t(what.rank)] != about)) {
      LAT_LOG(warn, "auth", "a report about rank ", what.rank, " of launch ", what.launch_id,
              " from ", secure::describe(sender.identity), " dropped: not a rank of that node",
              log_fields({{"launch", what.launch_id},
                          {"node", node_id_},
                          {"rank", cat(what.rank)},
                          {"peer", sender.identity.name}}));
      return;
    }
    about = spec().rank_nodes[static_cast<size_t>(what.rank)];
  }
  const bool loss = body.isNodeAnswer() && body.getNodeAnswer().getLost();
  if (auto allowed = relay_->may_pass(node_of(spec(), sender.identity), about, loss); !allowed) {
    LAT_LOG(warn, "auth", "a report for launch ", what.launch_id, " from ",
            secure::describe(sender.identity), " dropped: ", allowed.error().message,
            log_fields(
                {{"launch", what.launch_id}, {"node", node_id_}, {"peer", sender.identity.name}}));
    return;
  }
  if (body.isLaunchEnded()) relay_->ended(about);
  if (body.isNodeAnswer()) {
    auto answer = body.getNodeAnswer();
    if (answer.getError().size() == 0)
      relay_->accepted(about);
    else if (answer.getLost())
      relay_->lost(about);
    else
      relay_->refused(about);
  }
  report(wire::copy_of(envelope));
  if (body.isOutput()) hold_back_output();
  if (relayed_all()) host_.reap_soon();
}

void LaunchRoute::pass_down(uint64_t conn, schema::Envelope::Reader envelope) {
  if (!relay_ || conn != launcher_conn_) return;
  const std::vector<int>& to =
      envelope.getBody().isStdinChunk() ? relay_->input_children() : relay_->children();
  if (!to.empty()) send_down(to, wire::copy_of(envelope));
}

void LaunchRoute::send_down(const std::vector<int>& to, rpc::Outgoing message) {
  auto frame = rpc::encode_notification(message);
  if (!frame) return;  // what decoded within the limit, or was made here, encodes within it
  for (int child : to) peers_.send_encoded(spec().peers[static_cast<size_t>(child)], *frame);
}

void LaunchRoute::peer_lost(const std::string& node_id, const std::string& reason) {
  if (!relay_ || relayed_all()) return;
  std::vector<int> near = relay_->children();
  if (int parent = relay_->parent(); parent >= 0) near.push_back(parent);
  for (int node : near) {
    if (spec().peers[static_cast<size_t>(node)].node_id != node_id) continue;
    if (relay_->lost(node)) report(wire::node_answer({spec().launch_id, node, {}, reason, true}));
  }
  if (relay_->uplink() == LaunchRelay::kNowhere)
    LAT_LOG(warn, "relay", spec().launch_id,
            ": the head is lost too; this node's reports go nowhere",
            log_fields({{"launch", spec().launch_id}, {"node", node_id_}}));
}

void LaunchRoute::launcher_lost(const std::string& reason) {
  if (!relay_ || relay_->parent() < 0) {
    if (!launch_->ended()) launch_->launcher_lost(reason);
  } else if (!relayed_all()) {
    // Its parent lets the link go once everything here has passed (the parent's relay settled).
    const int parent = relay_->parent();
    Peer p = spec().peers[static_cast<size_t>(parent)];
    LAT_LOG(warn, "relay", spec().launch_id, ": the link from ", p.node_id,
            " (this node's parent in the launch's tree) closed; reports go to the head",
            log_fields({{"launch", spec().launch_id}, {"node", node_id_}, {"peer", p.node_id}}));
    const std::string why = cat("its link to this node closed (", reason, ")");
    if (relay_->lost(parent)) report(wire::node_answer({spec().launch_id, parent, {}, why, true}));
    launch_->peer_lost(p.node_id, why, false);
    // Below, nobody else may hear of it (the head may be what was lost): the abort goes down.
    policy::Failure failure;
    failure.kind = policy::FailureKind::node_lost;
    failure.detail = why;
    failure.node = node_id_;
    failure.peer = p.node_id;
    send_down(relay_->children(), lattice::wire::abort_message(spec().launch_id, failure));
  }
  // Nobody takes the output now: read it to the end (and drop it) so the launch can end.
  resume_output();
}

}  // namespace lattice::agent
