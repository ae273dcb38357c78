// A launch's messages to the other nodes of the launch (over the agent's sealed peer links, by
// node index), the fence and abort messages they send it, and the links to its tree neighbours.
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
    LAT_LOG(error, "launch", spec_.launch_id, ": message not sent: ", frame.error().message);
    return;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Peer peer = spec_.peers[static_cast<size_t>(nodes[i])];
    peers_.send_encoded(peer.node_id, peer.host, peer.port,
                        i + 1 < nodes.size() ? std::string(*frame) : std::move(*frame));
  }
}

void Launch::send_abort(int node, const Failure& failure) {
  send_to_node(node, lattice::wire::abort_message(spec_.launch_id, failure));
}

void Launch::fence_message(wire::FenceMessage message) {
  if (!tree_fence_) {
    LAT_LOG(warn, "fence", spec_.launch_id, ": fence message for a single-node launch dropped");
    return;
  }
  tree_fence_->receive(std::move(message));
}

void Launch::abort_received(policy::AbortSource from, Failure failure) {
  run(policy_.abort_received(from, std::move(failure)));
}

// The links to the tree neighbours are made and held (heartbeated) from the first rank's
// wire-up, so that they are up before its first fence and a hung (not only a dead) neighbour
// is noticed while ranks compute; or after a while, for ranks that never use PMI. A launch of
// short programs that never fence makes none: the fan-out's CPU goes to spawning.
void Launch::hold_neighbour_links() {
  if (!tree_fence_ || !link_holds_.empty() || ended()) return;
  links_timer_.stop();
  for (int node : tree_fence_->neighbors()) {
    const Peer peer = spec_.peers[static_cast<size_t>(node)];
    link_holds_.push_back(peers_.hold(peer.node_id, peer.host, peer.port));
  }
}

void Launch::peer_lost(const std::string& peer, const std::string& reason) {
  for (size_t node = 0; node < spec_.peers.size(); ++node) {
    const Peer p = spec_.peers[node];
    if (cat(p.host, ':', p.port) != peer) continue;
    run(policy_.peer_lost(static_cast<int>(node), p.node_id, reason));
    return;
  }
}

}  // namespace lattice::agent
