// The agent's allocations (allocation.hpp): started and ended by launchers (key holders),
// described to their users, ended on their own at their time limits or when the link that
// started them is lost; and the user door, where a local user's `lattice launch` asks for a
// launch in an allocation of theirs without the cluster key.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "agent/agent.hpp"
#include "base/log.hpp"
#include "net/peer_credentials.hpp"
#include "proc/cpu_binding.hpp"
#include "wire/allocation.hpp"

namespace lattice::agent {
namespace {

// A local user's links on the user door at once: its launches, nested ones, and a link for each
// proxy an MPI launcher in its batch step runs (Hydra starts one per node from there), as the
// escape hatch's exec door allows per launch (exec_door.cpp).
constexpr size_t kMaxDoorLinksPerUser = 256;
constexpr size_t kMaxDoorLinks = 1024;

// The CPUs this agent may run on (its affinity), lowest first.
std::vector<int> own_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

}  // namespace

Allocation* Agent::find_allocation(const std::string& id) {
  auto it = allocations_.find(id);
  return it == allocations_.end() ? nullptr : it->second.get();
}

Result<std::vector<int>> Agent::free_cpus(uint32_t wanted) const {
  if (wanted == 0) return std::vector<int>{};
  std::set<int> taken;
  for (const auto& [id, alloc] : allocations_)
    if (!alloc->drained()) taken.insert(alloc->cpus().begin(), alloc->cpus().end());
  std::vector<int> out;
  for (int cpu : own_cpus())
    if (!taken.count(cpu) && out.size() < wanted) out.push_back(cpu);
  if (out.size() < wanted)
    return make_error(cat("node ", config_.node_id, " has ", out.size(), " CPUs free of ",
                          own_cpus().size(), ", not the ", wanted, " asked for"));
  return out;
}

void Agent::allocation_start(const Sender& sender, uint64_t request_id,
                             schema::AllocationStart::Reader message) {
  rpc::Session& session = *session_of(sender.conn);
  auto refuse = [&](const std::string& why) {
    LAT_LOG(warn, "alloc", "refused an allocation from ", secure::describe(sender.identity), ": ",
            why, log_fields({{"node", config_.node_id}, {"peer", sender.identity.name}}));
    if (request_id) session.respond_error(request_id, why);
  };
  if (auto allowed = may_manage_allocations(sender); !allowed)
    return refuse(allowed.error().message);
  if (shutting_down_) return refuse(cat("agent on ", config_.node_id, " is shutting down"));
  if (!draining_.empty()) return refuse(refused_by_drain());
  auto spec = wire::decode_allocation_start(message);
  if (!spec) return refuse(spec.error().message);
  if (spec->nodes[spec->node_index].node_id != config_.node_id)
    return refuse(cat("it names node ", spec->node_index, " '",
                      spec->nodes[spec->node_index].node_id, "', but this is ", config_.node_id));
  if (allocations_.count(spec->id))
    return refuse(cat("allocation '", spec->id, "' already exists here"));
  if (spec->user.uid == 0 && !config_.allow_root_jobs)
    return refuse("root allocations need security.allow_root_jobs");
  if (self_uid_ != 0 && spec->user.uid != self_uid_)
    return refuse(cat("this agent runs as uid ", self_uid_, " and holds only its own allocations"));
  auto cpus = free_cpus(spec->cpus);
  if (!cpus) return refuse(cpus.error().message);
  std::unique_ptr<proc::AllocationGroup> group;
  if (containment_) {
    auto made = containment_->make_allocation(cat("LATTICE_ALLOC_ID=", spec->id),
                                              proc::GroupLimits{*cpus, spec->memory_bytes});
    if (!made) return refuse(cat("cannot contain it: ", made.error().message));
    group = std::move(made.value());
  }
  std::string id = spec->id;
  std::string limits = group ? group->limits_note() : std::string("not contained");
  Allocation::Hooks hooks{[this](Allocation& a) { allocation_ending(a); },
                          [this](Allocation& a) { allocation_drained(a); }};
  allocations_[id] =
      std::make_unique<Allocation>(loop_, std::move(spec.value()), std::move(cpus.value()),
                                   sender.conn, std::move(group), std::move(hooks));
  const Allocation& alloc = *allocations_[id];
  LAT_LOG(
      info, "alloc", id, ": started by ", secure::describe(sender.identity), " for ",
      alloc.spec().user.name, " (uid ", alloc.spec().user.uid, ") on ", alloc.spec().nodes.size(),
      " nodes, node ", alloc.spec().node_index, " here",
      alloc.spec().time_limit_ms ? cat(", time limit ", alloc.spec().time_limit_ms / 1000.0, " s")
                                 : std::string(),
      "; limits: ", limits,
      log_fields({{"alloc", id}, {"node", config_.node_id}, {"uid", cat(alloc.spec().user.uid)}}));
  if (request_id) session.respond(request_id, rpc::Outgoing());
}

void Agent::allocation_end(const Sender& sender, uint64_t request_id,
                           const wire::AllocationEnd& end) {
  rpc::Session& session = *session_of(sender.conn);
  Status allowed = may_manage_allocations(sender);
  Allocation* alloc = allowed ? find_allocation(end.id) : nullptr;
  if (allowed && !alloc) allowed = make_error(cat("no allocation '", end.id, "' here"));
  if (!allowed) {
    LAT_LOG(
        warn, "alloc", allowed.error().message,
        log_fields({{"alloc", end.id}, {"node", config_.node_id}, {"peer", sender.identity.name}}));
    if (request_id) session.respond_error(request_id, allowed.error().message);
    return;
  }
  alloc->end(end.reason.empty() ? std::string("ended by its owner") : end.reason);
  if (request_id) session.respond(request_id, rpc::Outgoing());
}

void Agent::allocation_info(const Sender& sender, uint64_t request_id, const std::string& id) {
  rpc::Session& session = *session_of(sender.conn);
  Allocation* alloc = find_allocation(id);
  if (!alloc || alloc->ending())
    return session.respond_error(request_id,
                                 cat("no allocation '", id, "' is running on ", config_.node_id));
  if (auto allowed = may_describe(alloc->spec(), sender); !allowed) {
    LAT_LOG_LIMITED(
        refusals_, warn, "auth", "allocation info", allowed.error().message,
        log_fields({{"alloc", id}, {"node", config_.node_id}, {"peer", sender.identity.name}}));
    // The same answer as for none: others do not learn which allocations exist.
    return session.respond_error(request_id,
                                 cat("no allocation '", id, "' is running on ", config_.node_id));
  }
  session.respond(request_id, wire::allocation_info(alloc->info()));
}

void Agent::allocation_ending(Allocation& alloc) {
  policy::Failure why;
  why.node = config_.node_id;
  if (alloc.time_limit_reached()) {
    why.kind = policy::FailureKind::time_limit;
    why.timeout_ms = alloc.spec().time_limit_ms;
    why.exit_code = 124;
    why.detail = cat("allocation ", alloc.id());
  } else {
    why.kind = policy::FailureKind::allocation_ended;
    why.detail = cat("allocation ", alloc.id(), " ended: ", alloc.end_reason());
  }
  for (auto& [id, entry] : launches_)
    if (entry.launch->spec().allocation_id == alloc.id() && !entry.launch->ended())
      entry.launch->abort_received(policy::FromLauncher{}, why);
}

void Agent::allocation_drained(Allocation& alloc) {
  LAT_LOG(
      info, "alloc", alloc.id(), ": ended (", alloc.end_reason(), ")",
      alloc.killed() ? cat(", ", alloc.killed(), " processes killed") : std::string(),
      log_fields(
          {{"alloc", alloc.id()}, {"node", config_.node_id}, {"uid", cat(alloc.spec().user.uid)}}));
  if (link::Connection* owner = open_connection(alloc.owner_conn()))
    owner->session().notify(
        wire::allocation_ended({alloc.id(), alloc.spec().node_index, alloc.end_reason(),
                                alloc.time_limit_reached(), alloc.killed()}));
  reaper_.start(0, 0, [this] { reap(); });
}

// Let go once drained and once no launch of it is left here (their groups are inside its own).
void Agent::reap_allocations() {
  for (auto it = allocations_.begin(); it != allocations_.end();) {
    const std::string& id = it->first;
    bool launches_left = std::any_of(launches_.begin(), launches_.end(), [&](const auto& e) {
      return e.second.launch->spec().allocation_id == id;
    });
    it = it->second->drained() && !launches_left ? allocations_.erase(it) : std::next(it);
  }
}

LaunchAllocation Agent::launch_allocation(Allocation& alloc, const LaunchSpec& spec) const {
  LaunchAllocation out{alloc.group(),
                       alloc.launch_env(spec, user_door_ ? user_door_->path() : std::string()),
                       std::nullopt, false, alloc.cpus()};
  // A batch step (no PMI): its MPI launchers place processes on all of the allocation's nodes,
  // as many on each as it holds CPUs here (nodes of an allocation are alike).
  if (spec.pmi == wire::PmiMode::none) {
    HatchHosts hosts;
    for (const auto& node : alloc.spec().nodes) hosts.nodes.push_back(node.node_id);
    hosts.slots =
        static_cast<int>(alloc.cpus().empty() ? proc::usable_cpus() : alloc.cpus().size());
    out.hatch_hosts = std::move(hosts);
    out.srun = spec.slurm_compat;
  }
  return out;
}

Status Agent::open_user_door() {
  std::string path = socket_dir_->path() + "/user.sock";
  auto door = net::UnixListener::listen(loop_, path,
                                        [this](auto stream) { accept_user(std::move(stream)); });
  if (!door) return make_error(cat("user door ", path, ": ", door.error().message));
  // Every local user may knock; who gets in, and to what, the kernel's credentials decide.
  if (::chmod(path.c_str(), 0666) != 0)
    return make_error(cat("user door ", path, ": cannot make it 0666: ", std::strerror(errno)));
  user_door_ = std::move(door.value());
  return {};
}

void Agent::accept_user(std::unique_ptr<net::Stream> stream) {
  if (shutting_down_) return;
  auto cred = net::peer_credentials(*stream);
  if (!cred) return;
  const uint32_t uid = cred->uid;
  size_t mine = 0, all = 0;
  for (const auto& [id, conn] : connections_) {
    auto other = user_uid(conn->identity());
    if (!conn->local() || !other) continue;
    ++all;
    if (*other == uid) ++mine;
  }
  if (mine >= kMaxDoorLinksPerUser || all >= kMaxDoorLinks) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "user door full", "refused uid ", uid,
                    " on the user door: ", mine, " of its links open (at most ",
                    kMaxDoorLinksPerUser, "), ", all, " in all (at most ", kMaxDoorLinks, ")",
                    log_fields({{"node", config_.node_id}, {"uid", cat(uid)}}));
    return;
  }
  uint64_t id = next_conn_id_++;
  arm_sweeper();
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, id](uint64_t request_id, schema::Envelope::Reader envelope) {
    on_message(id, request_id, envelope);
  };
  link::LinkOptions options;
  options.local_peer = secure::Identity{secure::Role::user, std::to_string(uid)};
  options.counts = &counts_;
  LAT_LOG(debug, "link", "connection ", id, " from uid ", uid, " on the user door");
  connections_[id] = std::make_unique<link::Connection>(
      loop_, std::move(stream), std::move(options), std::move(handlers), nullptr,
      [this, id](const Error& why) { connection_closed(id, why); });
}

}  // namespace lattice::agent
