// Who may do what to a launch, decided from the sealed link a message came on (its handshake
// identity), never from the message's own fields. Pure functions over the launch's spec, so
// every rule is unit-tested without sockets:
//   - a launch is started by a launcher link; it is signalled only by that launcher's link;
//   - it is aborted by its launcher, by its head agent, or (at the head) by any of its nodes;
//   - a fence chunk going up comes from a child of this node, going down (data or error) from
//     its parent, and its fromNode must be the node that link belongs to;
//   - a PMIx direct modex question comes from any node of the launch, its answer only from the
//     node the rank runs on;
//   - escape-hatch commands, their events and their ends come from nodes of the launch (the
//     launch then checks that an event comes from the node that was asked).
#pragma once

#include <cstdint>
#include <string>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "fence/tree.hpp"
#include "secure/identity.hpp"

namespace lattice::agent {

// The link a message arrived on: the agent's connection id and the peer it authenticated as.
struct Sender {
  uint64_t conn = 0;
  secure::Identity identity;
};

// Index of the launch's node that `who` is (an agent whose node id is in the peer list); -1.
int node_of(const LaunchSpec& spec, const secure::Identity& who);

Status may_start(const Sender& sender);
Status may_signal(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender);
Status may_abort(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender);
// `from` is the node index the message claims; `down` a PmiFenceComplete (data or error).
Status may_send_fence(const LaunchSpec& spec, const fence::Tree& tree, bool down, int from,
                      const Sender& sender);

// The sender's node index when it is one of the launch's nodes; `what` names the message.
Result<int> member_node(const LaunchSpec& spec, const Sender& sender, const std::string& what);
// The node index a name request (any node of the launch, at the head) or its answer (the head
// only) may come from: the sender's own.
Result<int> may_send_name(const LaunchSpec& spec, bool answer, const Sender& sender);
// The node index a direct modex message about `rank` may come from: the sender's own.
Result<int> may_send_modex(const LaunchSpec& spec, bool answer, int rank, const Sender& sender);

}  // namespace lattice::agent
