// A launch's messages to the other nodes of the launch (over the agent's sealed peer links, by
// node index), the aborts they send it, and the links to its tree neighbours.
#include "agent/launch.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "wire/failure_codec.hpp"

namespace lattice::agent {

void Launch::send_to_node(int node, rpc::Outgoing message) {
  send_to_nodes({node}, std::move(message));
}

void Launch::send_to_nodes(const std::vector<int>& nodes, rpc::Outgoing message) {
  if (nodes.empty()) return;
  auto frame = rpc::encode_notification(message);  // once, however many nodes
  if (!frame) {
    LAT_LOG(error, "launch", spec_.launch_id, ": message not sent: ", frame.error().message,
            log_fields({{"launch", spec_.launch_id}}));
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    peers_.send_encoded(spec_.peers[static_cast<size_t>(nodes[i])],
                        i + 1 < nodes.size() ? std::string(*frame) : std::move(*frame));
  }
}

void Launch::send_abort(int node, const Failure& failure) {
  send_to_node(node, lattice::wire::abort_message(spec_.launch_id, failure));
}

void Launch::abort_received(policy::AbortSource from, Failure failure) {
  run(policy_.abort_received(from, std::move(failure)));
}

// The links to the tree neighbours are held (heartbeated) from the first rank's wire-up, so
// that they are up before its first fence and a hung (not only a dead) neighbour is noticed
// while ranks compute; or after a while, for ranks that never use PMI. A launch of short
// programs that never fence makes none: the fan-out's CPU goes to spawning. Each node makes
// the link to its parent and waits for its children's (a relayed launch's parent made them
// already), so that a tree edge is one link, not two made at once from both ends.
void Launch::hold_neighbour_links() {
  if (!fence_.spans_nodes() || !link_holds_.empty() || ended()) return;
  links_timer_.stop();
  for (int node : fence_.neighbors())
    link_holds_.push_back(
        peers_.hold(spec_.peers[static_cast<size_t>(node)], node == fence_.parent()));
}

void Launch::peer_lost(const std::string& node_id, const std::string& reason, bool peer_ended) {
  if (int node = spec_.peers.find(node_id); node >= 0) {
    // The collectives it was in can no longer complete: their other nodes hear so now.
    connects_.node_lost(node, cat("node ", node_id, " was lost: ", reason));
    run(policy_.peer_lost(node, node_id, reason, peer_ended));
  }
}

}  // namespace lattice::agent
