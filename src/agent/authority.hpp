// Who may do what to a launch, decided from the sealed link a message came on (its handshake
// identity), never from the message's own fields. Pure functions over the launch's spec, so
// every rule is unit-tested without sockets:
//   - a launch is started by a launcher link (a relayed launch: at its head; elsewhere by the
//     node's parent in the fence tree); it is signalled only by the link it came on;
//   - it is aborted by its launcher, by its head agent, or (at the head) by any of its nodes;
//   - a fence chunk going up comes from a child of this node, going down (data or error) from
//     its parent, and its fromNode must be the node that link belongs to;
//   - a PMIx direct modex or a name request (at the head) comes from any node of the launch; its
//     answer comes back on the link the request went out on, to the node it was asked of;
//   - escape-hatch commands, their events and their ends come from nodes of the launch (the
//     launch then checks that an event comes from the node that was asked);
//   - a local user (the user door, identified by the kernel) starts only relayed launches at
//     this node, in an allocation of its own, and a launch that names an allocation runs only
//     where it is held, as its user, on its nodes; allocations are started and ended by
//     launchers (key holders), and described to them and to their own users.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "fence/tree.hpp"
#include "secure/identity.hpp"
#include "wire/allocation.hpp"

namespace lattice::agent {

// The link a message arrived on: the agent's connection id and the peer it authenticated as.
struct Sender {
  uint64_t conn = 0;
  secure::Identity identity;
};

// The uid of a local user on the user door; nullopt for any other link.
std::optional<uint32_t> user_uid(const secure::Identity& who);

// Index of the launch's node that `who` is (an agent whose node id is in the peer list); -1.
int node_of(const LaunchSpec& spec, const secure::Identity& who);

// Before the request is decoded: a launcher, a local user (judged with its allocation), or (a
// relayed launch) an agent.
Status may_start(const Sender& sender, bool relayed);
// A relayed launch reaches the head from its launcher (the name the request gives) and any
// other node from its parent in the fence tree.
Status may_start_relayed(const LaunchSpec& spec, const fence::Tree& tree, const Sender& sender);
// A launch naming allocation spec.allocation_id (`alloc`: this node's, null when it holds none
// by that id; `ending`: it is ending), or any launch from a local user.
Status may_launch_in(const LaunchSpec& spec, const wire::AllocationSpec* alloc, bool ending,
                     const Sender& sender);
// Starting and ending allocations: launchers only.
Status may_manage_allocations(const Sender& sender);
// The agent's whole status (every launch and allocation, their users): launchers only.
Status may_see_status(const Sender& sender);
// An allocation's description: launchers, and its own user (or root) on the user door.
Status may_describe(const wire::AllocationSpec& alloc, const Sender& sender);
Status may_signal(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender);
// A spawned launch's family (spec.spawned_by->family_id()), whose first launch serves its names
// and collectives: its parent's own family when the parent runs here (`parent`), and a first
// launch of its own user when that runs here (`family`); null: not here.
Status may_join_family(const LaunchSpec& spec, const LaunchSpec* parent, const LaunchSpec* family,
                       const Sender& sender);
// A spawned launch (spec.spawned_by) beside its parent's running part here shares the node as
// its parent does, if it comes from the identity the parent came from (`parent_launcher`), runs
// as the parent's user, and on nodes of the parent's.
Status may_spawn_beside(const LaunchSpec& spec, const LaunchSpec& parent,
                        const secure::Identity& parent_launcher, const Sender& sender);
Status may_abort(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender);
// A relayed launch's own launcher (the name its request gives) on a link of its own, once the
// head is lost: that link becomes the launch's (the agent's adopt()).
bool may_adopt(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender);
// `from` is the node index the message claims; `down` a PmiFenceComplete (data or error).
Status may_send_fence(const LaunchSpec& spec, const fence::Tree& tree, bool down, int from,
                      const Sender& sender);

// The sender's node index when it is one of the launch's nodes; `what` names the message.
Result<int> member_node(const LaunchSpec& spec, const Sender& sender, const std::string& what);
// The node index a name request may come from (any node of the launch, at its head): the
// sender's own.
Result<int> may_ask_name(const LaunchSpec& spec, const Sender& sender);
// The node index a direct modex about `rank` may come from (any node of the launch): the
// sender's own.
// A PMIx collective's entry (PmixConnect): from a node of the launch, to its head; which
// participants the node hosts is the head's tally to judge.
Result<int> may_enter_collective(const LaunchSpec& spec, const Sender& sender);
// `parent`: the first launch of `spec`'s family (spawned_by's family_id), as this agent runs it
// (null: none here), whose nodes may ask too (MPI_Comm_spawn's parents read their children's
// data, and every generation each other's): -1 for such a node.
Result<int> may_ask_modex(const LaunchSpec& spec, int rank, const Sender& sender,
                          const LaunchSpec* parent = nullptr);
// A spawned launch's layout (PmixFamily): from the launch's head, or from one of its nodes to
// its head (a later generation, which the head then tells every node).
Result<int> may_tell_family(const LaunchSpec& spec, const Sender& sender);

}  // namespace lattice::agent
