#include "agent/authority.hpp"

#include <string_view>
#include <unordered_map>

#include "base/strings.hpp"

namespace lattice::agent {
namespace {

Error refused(const Sender& s, const std::string& what, const LaunchSpec& spec,
              const std::string& why) {
  return make_error(cat(what, " for launch ", spec.launch_id, " from ",
                        secure::describe(s.identity), " refused: ", why));
}

}  // namespace

std::optional<uint32_t> user_uid(const secure::Identity& who) {
  if (who.role != secure::Role::user) return std::nullopt;
  auto uid = parse_int(who.name);
  if (!uid || *uid < 0 || *uid > 0xffffffffLL) return std::nullopt;
  return static_cast<uint32_t>(*uid);
}

int node_of(const LaunchSpec& spec, const secure::Identity& who) {
  return who.role == secure::Role::agent ? spec.peers.find(who.name) : -1;
}

Status may_start(const Sender& sender, bool relayed) {
  // A local user's is judged with its allocation (may_launch_in).
  if (sender.identity.role == secure::Role::agent && !relayed)
    return make_error(cat("a launch request from ", secure::describe(sender.identity),
                          " refused: only launchers start launches"));
  return {};
}

Status may_launch_in(const LaunchSpec& spec, const wire::AllocationSpec* alloc, bool ending,
                     const Sender& sender) {
  const std::optional<uint32_t> uid = user_uid(sender.identity);
  auto refuse = [&](const std::string& why) {
    return make_error(cat("a launch from ", secure::describe(sender.identity), " refused: ", why));
  };
  if (sender.identity.role == secure::Role::user && spec.allocation_id.empty())
    return refuse("without the cluster key, a launch runs only inside an allocation (--alloc ID)");
  if (sender.identity.role == secure::Role::user && spec.node_index != spec.head_node)
    return refuse("a launch through the user door starts at its head, the door's own node");
  if (spec.allocation_id.empty()) return {};
  // Another user hears the same as for none: nobody learns which allocations others hold.
  const bool from_user = sender.identity.role == secure::Role::user;
  if (!alloc || (from_user && (!uid || (*uid != alloc->user.uid && *uid != 0))))
    return refuse(cat("allocation '", spec.allocation_id, "' is not held by this node",
                      from_user ? " (or is not this user's)" : ""));
  if (ending) return refuse(cat("allocation '", spec.allocation_id, "' is ending"));
  const JobUser& owner = alloc->user;
  if (spec.user.uid != owner.uid || spec.user.gid != owner.gid || spec.user.name != owner.name ||
      (owner.groups && spec.user.groups != owner.groups))
    return refuse(cat("allocation '", spec.allocation_id, "' runs launches as ", owner.name,
                      " (uid ", owner.uid, ") and its groups only"));
  // Once over each list: a launch and its allocation may both span tens of thousands of nodes.
  std::unordered_map<std::string_view, const wire::PeerInfo*> held_nodes;
  for (const auto& node : alloc->nodes) held_nodes.emplace(node.node_id, &node);
  for (size_t i = 0; i < spec.peers.size(); ++i) {
    const Peer peer = spec.peers[i];
    auto it = held_nodes.find(peer.node_id);
    if (it == held_nodes.end() || it->second->host != peer.host || it->second->port != peer.port)
      return refuse(cat("node ", peer.node_id, " is not one of allocation '", spec.allocation_id,
                        "''s nodes"));
  }
  return {};
}

Status may_manage_allocations(const Sender& sender) {
  if (sender.identity.role == secure::Role::launcher) return {};
  return make_error(cat("an allocation's start or end from ", secure::describe(sender.identity),
                        " refused: only launchers (holders of the cluster key) manage them"));
}

Status may_see_status(const Sender& sender) {
  if (sender.identity.role == secure::Role::launcher) return {};
  return make_error(cat("a status request from ", secure::describe(sender.identity),
                        " refused: only launchers (holders of the cluster key) may ask"));
}

Status may_describe(const wire::AllocationSpec& alloc, const Sender& sender) {
  if (sender.identity.role == secure::Role::launcher) return {};
  auto uid = user_uid(sender.identity);
  if (uid && (*uid == alloc.user.uid || *uid == 0)) return {};
  return make_error(cat("allocation '", alloc.id, "' asked about by ",
                        secure::describe(sender.identity), " refused: it is not theirs"));
}

Status may_start_relayed(const LaunchSpec& spec, const fence::Tree& tree, const Sender& sender) {
  const secure::Identity& who = sender.identity;
  const int parent = tree.parent(spec.node_index);
  auto refuse = [&](const std::string& why) {
    return make_error(cat("a relayed launch request for ", spec.launch_id, " from ",
                          secure::describe(who), " refused: ", why));
  };
  if (parent < 0) {
    if (who.role != secure::Role::launcher && who.role != secure::Role::user)
      return refuse("only launchers and local users start launches");
    if (who.name != spec.launcher_name)
      return refuse(cat("it names its launcher '", spec.launcher_name, "'"));
    return {};
  }
  if (node_of(spec, who) != parent)
    return refuse(cat("only node ", parent, " (", spec.peers[static_cast<size_t>(parent)].node_id,
                      "), this node's parent in the fence tree, passes it here"));
  return {};
}

Status may_signal(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender) {
  if (sender.conn == launcher_conn) return {};
  return refused(sender, "a signal", spec, "only the launch's own launcher may signal it");
}

Status may_spawn_beside(const LaunchSpec& spec, const LaunchSpec& parent,
                        const secure::Identity& parent_launcher, const Sender& sender) {
  const std::string what = "a spawned launch";
  if (sender.identity.role != parent_launcher.role || sender.identity.name != parent_launcher.name)
    return refused(sender, what, spec,
                   cat("its parent came from ", secure::describe(parent_launcher)));
  if (spec.user.uid != parent.user.uid)
    return refused(sender, what, spec, "it runs as another user than its parent");
  if (spec.spawned_by->rank >= static_cast<uint32_t>(parent.world_size))
    return refused(sender, what, spec, "its parent has no such rank");
  bool inside = true;
  spec.peers.for_each_id([&](size_t, std::string_view id) {
    bool found = false;
    parent.peers.for_each_id([&](size_t, std::string_view p) { found = found || p == id; });
    inside = inside && found;
  });
  if (!inside) return refused(sender, what, spec, "it has nodes its parent has not");
  return {};
}

Status may_join_family(const LaunchSpec& spec, const LaunchSpec* parent, const LaunchSpec* family,
                       const Sender& sender) {
  const std::string what = "a spawned launch";
  const std::string& claimed = spec.spawned_by->family_id();
  if (parent) {
    const std::string& parents =
        parent->spawned_by ? parent->spawned_by->family_id() : parent->launch_id;
    if (claimed != parents)
      return refused(sender, what, spec,
                     cat("it names family ", claimed, ", its parent's is ", parents));
  }
  if (family && family->user.uid != spec.user.uid)
    return refused(sender, what, spec, "its family's first launch runs as another user");
  return {};
}

Status may_abort(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender) {
  if (sender.conn == launcher_conn) return {};
  int node = node_of(spec, sender.identity);
  if (node < 0) return refused(sender, "an abort", spec, "the sender is not one of its nodes");
  if (node == spec.head_node || spec.node_index == spec.head_node) return {};
  return refused(sender, "an abort", spec, "only its head (or the launcher) aborts this node");
}

bool may_adopt(const LaunchSpec& spec, uint64_t launcher_conn, const Sender& sender) {
  return spec.relayed && sender.conn != launcher_conn &&
         sender.identity.role == secure::Role::launcher &&
         sender.identity.name == spec.launcher_name;
}

Status may_send_fence(const LaunchSpec& spec, const fence::Tree& tree, bool down, int from,
                      const Sender& sender) {
  std::string what = down ? "a fence completion" : "a fence contribution";
  int node = node_of(spec, sender.identity);
  if (node < 0) return refused(sender, what, spec, "the sender is not one of its nodes");
  if (from != node)
    return refused(sender, what, spec,
                   cat("it claims to come from node ", from, " but the link is node ", node));
  bool related = down ? tree.parent(spec.node_index) == node : tree.parent(node) == spec.node_index;
  if (!related)
    return refused(sender, what, spec,
                   cat("node ", node, " is not this node's ", down ? "parent" : "child",
                       " in the fence tree"));
  return {};
}

Result<int> member_node(const LaunchSpec& spec, const Sender& sender, const std::string& what) {
  int from = node_of(spec, sender.identity);
  if (from < 0)
    return make_error(cat(what, " for launch ", spec.launch_id, " from ",
                          secure::describe(sender.identity), ", not one of its nodes, dropped"));
  return from;
}

namespace {

Result<int> may_ask_head(const LaunchSpec& spec, const Sender& sender, const char* what) {
  auto member = member_node(spec, sender, what);
  if (!member) return member;
  if (spec.node_index != spec.head_node)
    return make_error(cat(what, " for launch ", spec.launch_id, " from ",
                          secure::describe(sender.identity),
                          " dropped: this node is not its head"));
  return member;
}

}  // namespace

Result<int> may_ask_name(const LaunchSpec& spec, const Sender& sender) {
  return may_ask_head(spec, sender, "a name request");
}

Result<int> may_enter_collective(const LaunchSpec& spec, const Sender& sender) {
  return may_ask_head(spec, sender, "a PMIx collective");
}

Result<int> may_ask_modex(const LaunchSpec& spec, int rank, const Sender& sender,
                          const LaunchSpec* parent) {
  auto member = member_node(spec, sender, "a PMIx modex request");
  if (!member && parent && spec.spawned_by && spec.spawned_by->family_id() == parent->launch_id &&
      member_node(*parent, sender, "a PMIx modex request"))
    member = -1;
  if (!member) return member;
  if (rank < 0 || rank >= spec.world_size)
    return make_error(cat("a PMIx modex request for launch ", spec.launch_id, " about rank ", rank,
                          ", not one of its ranks, dropped"));
  return member;
}

Result<int> may_tell_family(const LaunchSpec& spec, const Sender& sender) {
  auto member = member_node(spec, sender, "a spawned launch's layout");
  if (member && *member != spec.head_node && spec.node_index != spec.head_node)
    return make_error(cat("a spawned launch's layout for launch ", spec.launch_id, " from ",
                          secure::describe(sender.identity),
                          ", neither its head nor sent to its head, dropped"));
  return member;
}

}  // namespace lattice::agent
