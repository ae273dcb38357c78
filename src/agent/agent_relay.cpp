// The agent's part in relayed launches (launch_relay.hpp): requests on to the children, their
// answers and reports up, what the launcher sends down, and losses on either side.
#include <utility>

#include "agent/agent.hpp"
#include "base/log.hpp"
#include "wire/failure_codec.hpp"
#include "wire/launch_request.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {
namespace {

// A child that neither answers its request nor is found lost within this is reported lost
// (under the launcher's own deadline for every node, so its parent says so first).
constexpr uint64_t kChildAnswerMs = 10000;
// How long a relay that has ended here keeps passing reports up for the nodes below it: every
// node reports its end or is reported lost well within this; it bounds what a node that never
// does can keep here.
constexpr uint64_t kRelayLingerMs = 60000;

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

bool Agent::relayed_all(const LaunchEntry& entry) const {
  return entry.launch->ended() &&
         (!entry.relay || (entry.relay->settled() && entry.held_reports.empty()));
}

bool Agent::reapable(const LaunchEntry& entry, uint64_t now) const {
  // Its policy may have ended while the launch still sweeps strays or waits for escape-hatch
  // commands: only its end, reported (ended_ms), lets it go; before, a reap in between (a closed
  // connection, the sweeper) destroyed it unreported and its launcher waited forever.
  if (!entry.launch->ended() || entry.ended_ms == 0) return false;
  if (relayed_all(entry) || shutting_down_) return true;
  if (now - entry.ended_ms < kRelayLingerMs) return false;
  LAT_LOG(warn, "relay", entry.launch->id(), ": no longer passing reports on (",
          entry.relay->settled() ? "the launcher never came for those held here"
                                 : "some nodes below this one never reported their end",
          ")");
  return true;
}

void Agent::relay_request(LaunchEntry& entry, schema::LaunchProcessesRequest::Reader request) {
  const LaunchSpec& spec = entry.launch->spec();
  // Copied out once: every read of the received message counts against its traversal limit,
  // which a copy per child would exhaust at a fanout of 8.
  rpc::Outgoing own = wire::relayed_request(request, spec.node_index);
  auto source = own.envelope().asReader().getBody().getLaunchProcesses();
  for (int child : entry.relay->children()) {
    Peer p = spec.peers[static_cast<size_t>(child)];
    entry.child_holds.push_back(peers_.hold(p, true));
    peers_.call(p, wire::relayed_request(source, child), kChildAnswerMs,
                [this, id = spec.launch_id, child](Result<schema::Envelope::Reader> reply) {
                  child_answered(id, child, reply);
                });
  }
}

void Agent::child_answered(const std::string& launch_id, int child,
                           const Result<schema::Envelope::Reader>& reply) {
  LaunchEntry* entry = find_launch(launch_id);
  if (!entry || !entry->relay) return;
  const bool lost = !reply && reply.error().kind != ErrorKind::refused;
  if (reply) {
    entry->relay->accepted(child);
  } else if (!lost) {
    entry->relay->refused(child);
  } else if (!entry->relay->lost(child)) {
    return;  // reported lost already, when its link went
  }
  report(*entry, wire::node_answer(node_answer(launch_id, child, reply, lost)));
  if (relayed_all(*entry)) reaper_.start(0, 0, [this] { reap(); });
}

void Agent::pass_up(const Sender& sender, schema::Envelope::Reader envelope) {
  auto body = envelope.getBody();
  std::string launch_id;
  int about = -1, rank = -1;
  switch (body.which()) {
    case schema::Envelope::Body::OUTPUT:
      launch_id = body.getOutput().getLaunchId();
      rank = static_cast<int>(body.getOutput().getRank());
      break;
    case schema::Envelope::Body::RANK_EXIT:
      launch_id = body.getRankExit().getLaunchId();
      rank = static_cast<int>(body.getRankExit().getRank());
      about = static_cast<int>(body.getRankExit().getNodeIndex());
      break;
    case schema::Envelope::Body::LAUNCH_ENDED:
      launch_id = body.getLaunchEnded().getLaunchId();
      about = static_cast<int>(body.getLaunchEnded().getNodeIndex());
      break;
    case schema::Envelope::Body::STDIN_TAKEN:
      launch_id = body.getStdinTaken().getLaunchId();
      about = static_cast<int>(body.getStdinTaken().getNodeIndex());
      break;
    case schema::Envelope::Body::NODE_ANSWER:
      launch_id = body.getNodeAnswer().getLaunchId();
      about = static_cast<int>(body.getNodeAnswer().getNodeIndex());
      break;
    default:
      return;  // nothing else comes up a relayed launch's links
  }
  LaunchEntry* entry = find_launch(launch_id);
  if (!entry || !entry->relay) {
    LAT_LOG(debug, "relay", "a report for launch ", launch_id, " from ",
            secure::describe(sender.identity), " dropped: no relayed launch of that id here");
    return;
  }
  const LaunchSpec& spec = entry->launch->spec();
  if (rank >= 0) {
    // A rank's report is about the node the layout puts it on, and only that node's.
    if (rank >= spec.world_size || (about >= 0 && spec.rank_nodes[size_t(rank)] != about)) {
      LAT_LOG(warn, "auth", "a report about rank ", rank, " of launch ", launch_id, " from ",
              secure::describe(sender.identity), " dropped: not a rank of that node");
      return;
    }
    about = spec.rank_nodes[static_cast<size_t>(rank)];
  }
  const bool loss = body.isNodeAnswer() && body.getNodeAnswer().getLost();
  if (auto allowed = entry->relay->may_pass(node_of(spec, sender.identity), about, loss);
      !allowed) {
    LAT_LOG(warn, "auth", "a report for launch ", launch_id, " from ",
            secure::describe(sender.identity), " dropped: ", allowed.error().message);
    return;
  }
  if (body.isLaunchEnded()) entry->relay->ended(about);
  if (body.isNodeAnswer()) {
    auto answer = body.getNodeAnswer();
    if (answer.getError().size() == 0)
      entry->relay->accepted(about);
    else if (answer.getLost())
      entry->relay->lost(about);
    else
      entry->relay->refused(about);
  }
  report(*entry, wire::copy_of(envelope));
  if (body.isOutput()) hold_back_output(*entry);
  if (relayed_all(*entry)) reaper_.start(0, 0, [this] { reap(); });
}

void Agent::pass_down(const Sender& sender, const std::string& launch_id,
                      schema::Envelope::Reader envelope) {
  LaunchEntry* entry = find_launch(launch_id);
  if (!entry || !entry->relay || sender.conn != entry->launcher_conn) return;
  const std::vector<int>& to =
      envelope.getBody().isStdinChunk() ? entry->relay->input_children() : entry->relay->children();
  if (to.empty()) return;
  send_down(*entry, to, wire::copy_of(envelope));
}

void Agent::send_down(const LaunchEntry& entry, const std::vector<int>& to, rpc::Outgoing message) {
  auto frame = rpc::encode_notification(message);
  if (!frame) return;  // what decoded within the limit, or was made here, encodes within it
  for (int child : to)
    peers_.send_encoded(entry.launch->spec().peers[static_cast<size_t>(child)], *frame);
}

void Agent::relay_peer_lost(const std::string& node_id, const std::string& reason) {
  for (auto& [id, entry] : launches_) {
    if (!entry.relay || relayed_all(entry)) continue;
    const LaunchSpec& spec = entry.launch->spec();
    std::vector<int> near = entry.relay->children();
    if (int parent = entry.relay->parent(); parent >= 0) near.push_back(parent);
    for (int node : near) {
      if (spec.peers[static_cast<size_t>(node)].node_id != node_id) continue;
      if (entry.relay->lost(node)) report(entry, wire::node_answer({id, node, {}, reason, true}));
    }
    if (entry.relay->uplink() == LaunchRelay::kNowhere)
      LAT_LOG(warn, "relay", id, ": the head is lost too; this node's reports go nowhere");
  }
}

void Agent::relay_origin_lost(LaunchEntry& entry, const std::string& reason) {
  // Its parent lets the link go once everything here has passed (the parent's relay settled).
  if (relayed_all(entry)) return;
  const LaunchSpec& spec = entry.launch->spec();
  const int parent = entry.relay->parent();
  Peer p = spec.peers[static_cast<size_t>(parent)];
  LAT_LOG(warn, "relay", spec.launch_id, ": the link from ", p.node_id,
          " (this node's parent in the launch's tree) closed; reports go to the head");
  const std::string why = cat("its link to this node closed (", reason, ")");
  if (entry.relay->lost(parent))
    report(entry, wire::node_answer({spec.launch_id, parent, {}, why, true}));
  entry.launch->peer_lost(p.node_id, why);
  // Below, nobody else may hear of it (the head may be what was lost): the abort goes down.
  policy::Failure failure;
  failure.kind = policy::FailureKind::node_lost;
  failure.detail = why;
  failure.node = config_.node_id;
  failure.peer = p.node_id;
  send_down(entry, entry.relay->children(), lattice::wire::abort_message(spec.launch_id, failure));
}

}  // namespace lattice::agent
