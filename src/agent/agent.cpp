#include "agent/agent.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ctime>

#include "agent/exclusive.hpp"
#include "base/log.hpp"
#include "lattice_version.h"
#include "wire/allocation.hpp"
#include "wire/control.hpp"
#include "wire/exec_codec.hpp"
#include "wire/failure_codec.hpp"
#include "wire/fence_chunk.hpp"
#include "wire/launch_request.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"
#include "wire/reports.hpp"

namespace lattice::agent {

// Ended launches remembered for late escape-hatch commands: a few minutes' worth of launches.
constexpr size_t kEndedLaunchesKept = 64;
namespace {

// Pending rpc calls, idle links and early fence chunks are checked this often.
constexpr uint64_t kSweepPeriodMs = 500;
// Fence chunks and aborts held for launches this agent has not been asked to run yet (the
// launcher's requests race the children's contributions and the head's aborts): enough for a
// large store arriving early from several children, bounded so that no peer can make this
// agent hold more, or for long.
constexpr size_t kMaxEarlyBytes = size_t{64} << 20;
constexpr uint64_t kMaxEarlyAgeMs = 30000;
// How long the agent must have been without launches and reaping before it trims the heap.
constexpr uint64_t kTrimQuietMs = 2000;

// Links to peers stay this long after their last use, for the next launch; well under the
// peers' idle timeout (the same setting across a cluster), so only this side ever closes them.
uint64_t link_linger_ms(const config::AgentConfig& config) {
  return std::min<uint64_t>(5000, config.idle_timeout_ms / 4);
}

}  // namespace

Agent::Agent(net::Loop& loop, config::AgentConfig config, secure::Credentials& credentials,
             LaunchEnvironment environment, std::string config_source, Reread reread)
    : loop_(loop),
      metrics_(policy::kind_names(), refusal_causes()),
      config_(std::move(config)),
      config_source_(std::move(config_source)),
      reread_(std::move(reread)),
      credentials_(credentials),
      environment_(std::move(environment)),
      started_ms_(loop.now_ms()),
      slots_(config_.max_connections, config_.max_handshakes_per_source),
      self_uid_(::geteuid()),
      peers_(loop, *this,
             NodeLinks::Options{{config_.heartbeat_interval_ms, config_.heartbeat_misses},
                                link_linger_ms(config_)},
             [this](const std::string& node_id, const std::string& reason, bool peer_ended) {
               node_lost(node_id, reason, peer_ended);
             }),
      early_(kMaxEarlyBytes, kMaxEarlyAgeMs),
      reaper_(loop),
      sweeper_(loop),
      service_(loop) {
  environment_.parents = this;
  environment_.metrics = &metrics_;
}

Agent::~Agent() = default;

Status Agent::start(int ready_fd) {
  auto dir = SocketDir::claim(config_.pmi_socket_dir);
  if (!dir) return dir.error();
  socket_dir_ = std::move(dir.value());
  environment_.socket_dir = socket_dir_.get();
  socket_dir_->remove_leftovers();
  auto containment = proc::Containment::choose(config_.containment);
  if (!containment) return containment.error();
  containment_ = std::move(containment.value());
  environment_.containment = containment_.get();
  LAT_LOG(info, "contain", "launches are contained by ", containment_->describe());
  if (containment_->mode() == proc::ContainmentMode::subreaper)
    orphan_reaper_ = std::make_unique<net::OrphanReaper>(loop_);
  if (int killed = containment_->remove_leftovers())
    LAT_LOG(warn, "contain", "killed ", killed,
            " processes left by an agent before this one, which ended without ending its launches");
  pmix_ = std::make_unique<PmixHost>(loop_, socket_dir_->path(), config_.node_id);
  environment_.pmix = pmix_.get();

  auto listener = net::TcpListener::listen(loop_, config_.listen_host, config_.listen_port,
                                           [this](auto stream) { accept(std::move(stream)); });
  if (!listener)
    return make_error(cat("cannot listen on ", config_.listen_host, ':', config_.listen_port, ": ",
                          listener.error().message));
  listener_ = std::move(listener.value());
  if (!config_.admin_socket.empty()) {
    auto admin = net::UnixListener::listen(
        loop_, config_.admin_socket, [this](auto stream) { accept_admin(std::move(stream)); });
    if (!admin)
      return make_error(cat("admin socket ", config_.admin_socket, ": ", admin.error().message));
    admin_listener_ = std::move(admin.value());
  }
  if (!config_.metrics_host.empty()) {
    auto endpoint = MetricsEndpoint::listen(loop_, config_.metrics_host, config_.metrics_port,
                                            [this] { return metrics(); });
    if (!endpoint)
      return make_error(cat("metrics.listen ", config_.metrics_host, ':', config_.metrics_port,
                            ": ", endpoint.error().message));
    metrics_endpoint_ = std::move(endpoint.value());
    auto at = metrics_endpoint_->bound();
    LAT_LOG(info, "agent", "metrics served on http://", at.host, ':', at.port, "/metrics");
  }
  if (auto door = open_user_door(); !door) return door;
  for (int signum : {SIGTERM, SIGINT})
    signals_.push_back(
        std::make_unique<net::SignalWatcher>(loop_, signum, [this](int s) { shutdown(s); }));
  signals_.push_back(
      std::make_unique<net::SignalWatcher>(loop_, SIGHUP, [this](int) { reload(); }));
  auto bound = listener_->bound();
  LAT_LOG(info, "agent", "node ", config_.node_id, " listening on ", bound.host, ':', bound.port,
          " (cluster key ", credentials_.cluster_key().id(), "), admin socket ",
          config_.admin_socket);
  log_identity();
  if (ready_fd >= 0) {
    std::string line = cat(bound.host, ':', bound.port, '\n');
    if (::write(ready_fd, line.data(), line.size()) < 0)
      LAT_LOG(warn, "agent", "cannot write to --ready-fd ", ready_fd);
    ::close(ready_fd);
  }
  service_.ready(cat("node ", config_.node_id, " listening on ", bound.host, ':', bound.port));
  return {};
}

void Agent::node_lost(const std::string& node_id, const std::string& reason, bool peer_ended) {
  for (auto& [id, entry] : launches_) {
    entry.route->peer_lost(node_id, reason);
    entry.launch->peer_lost(node_id, reason, peer_ended);
  }
}

// How peers will know this node, and whom it believes; a certificate near its end is warned of
// at every start, since peers refuse an expired one.
void Agent::log_identity() const {
  const auto& authority = credentials_.authority();
  const std::string trust =
      authority
          ? cat("peers must show certificates of authority ", secure::authority_id(*authority),
                credentials_.revoked().empty()
                    ? std::string()
                    : cat(", not of the ", credentials_.revoked().size(), " revoked keys"))
          : std::string("no authority: peers are named on the cluster key alone");
  const secure::OwnIdentity* own = credentials_.own();
  if (!own) {
    LAT_LOG(info, "agent", "no identity file (", trust, ")");
    return;
  }
  const uint64_t not_after = own->certificate.not_after;
  const auto now = static_cast<uint64_t>(std::time(nullptr));
  const uint64_t days = not_after > now ? (not_after - now) / 86400 : 0;
  const std::string key = secure::static_key_hex(own->certificate.static_key);
  if (days < 14)
    LAT_LOG(warn, "agent", "this node's certificate expires in ", days,
            " days: renew it (lattice-agentd --certify) before peers refuse it (static key ", key,
            "; ", trust, ")");
  else
    LAT_LOG(info, "agent", "certified as ", secure::describe(own->certificate.holder), " for ",
            days, " more days, static key ", key, " (", trust, ")");
}

void Agent::on_message(uint64_t conn_id, uint64_t request_id, schema::Envelope::Reader envelope) {
  auto& conn = *connections_.at(conn_id);
  Sender sender{conn_id, conn.identity()};
  auto body = envelope.getBody();
  switch (body.which()) {
    case schema::Envelope::Body::LAUNCH_PROCESSES:
      if (request_id == 0) return;  // a launch needs a reply channel
      return launch_processes(sender, request_id, body.getLaunchProcesses());
    case schema::Envelope::Body::PMI_FENCE:
      return fence_message(wire::decode_fence_up(body.getPmiFence()), sender);
    case schema::Envelope::Body::PMI_FENCE_COMPLETE:
      return fence_message(wire::decode_fence_down(body.getPmiFenceComplete()), sender);
    case schema::Envelope::Body::STDIN_CHUNK: {
      auto chunk = wire::decode_stdin_chunk(body.getStdinChunk());
      const std::string& launch_id = chunk.launch_id;
      LaunchEntry* entry = find_launch(launch_id);
      if (!entry) return;
      // Only the launch's own launcher link feeds its ranks, as only it may signal them.
      if (auto allowed = may_signal(entry->launch->spec(), entry->route->launcher_conn(), sender);
          !allowed) {
        LAT_LOG(warn, "auth", "stdin for launch ", launch_id, " refused: ", allowed.error().message,
                log_fields({{"launch", launch_id},
                            {"node", config_.node_id},
                            {"peer", sender.identity.name}}));
        return;
      }
      entry->launch->input(std::move(chunk.data), chunk.eof);
      return entry->route->pass_down(sender.conn, envelope);
    }
    case schema::Envelope::Body::OUTPUT:
    case schema::Envelope::Body::RANK_EXIT:
    case schema::Envelope::Body::LAUNCH_ENDED:
    case schema::Envelope::Body::STDIN_TAKEN:
    case schema::Envelope::Body::NODE_ANSWER:
      return pass_up(sender, envelope);
    case schema::Envelope::Body::PMI_NAME:
      if (request_id == 0) return;  // nobody would hear the answer
      return name_request(sender, request_id, wire::decode_name(body.getPmiName()));
    case schema::Envelope::Body::PMIX_SPAWN:
      if (request_id == 0) return;
      return spawn_request(sender, request_id, body.getPmixSpawn());
    case schema::Envelope::Body::PMIX_FAMILY:
      if (request_id == 0) return;
      return family_notice(sender, request_id, body.getPmixFamily());
    case schema::Envelope::Body::PMIX_CONNECT:
      if (request_id == 0) return;
      return collective_request(sender, request_id, wire::decode_collective(body.getPmixConnect()));
    case schema::Envelope::Body::PMIX_MODEX:
      if (request_id == 0) return;
      return modex_request(sender, request_id, wire::decode_modex(body.getPmixModex()));
    case schema::Envelope::Body::PMIX_EVENT:
      return pmix_event(sender, request_id, body.getPmixEvent());
    case schema::Envelope::Body::PMIX_CONTROL:
      if (request_id == 0) return;
      return pmix_control(sender, request_id, body.getPmixControl());
    case schema::Envelope::Body::REMOTE_EXEC: {
      auto command = lattice::wire::decode_remote_exec(body.getRemoteExec());
      if (!find_launch(command.launch_id)) return refuse_late_exec(command, sender);
      return exec_message(
          command.launch_id, "an escape-hatch command", sender,
          [&](Launch& launch, int from) { launch.hatch().remote_exec(from, std::move(command)); });
    }
    case schema::Envelope::Body::REMOTE_EXEC_KILL: {
      auto kill = lattice::wire::decode_remote_exec_kill(body.getRemoteExecKill());
      return exec_message(
          kill.launch_id, "an escape-hatch kill", sender,
          [&](Launch& launch, int from) { launch.hatch().remote_exec_kill(from, kill.exec_id); });
    }
    case schema::Envelope::Body::REMOTE_EXEC_EVENT: {
      auto event = lattice::wire::decode_exec_event(body.getRemoteExecEvent());
      return exec_message(event.launch_id, "an escape-hatch event", sender,
                          [&](Launch& launch, int from) {
                            launch.hatch().remote_exec_event(from, std::move(event));
                          });
    }
    case schema::Envelope::Body::ABORT_PROCESSES:
      abort_processes(sender, request_id, body.getAbortProcesses());
      return pass_down(sender, body.getAbortProcesses().getLaunchId(), envelope);
    case schema::Envelope::Body::SIGNAL_PROCESSES:
      signal_processes(sender, request_id, wire::decode_signal(body.getSignalProcesses()));
      return pass_down(sender, body.getSignalProcesses().getLaunchId(), envelope);
    case schema::Envelope::Body::CLOSE_LINK:
      if (!request_id) return;
      if (peers_.may_close(conn_id))
        conn.session().respond(request_id, rpc::Outgoing());
      else
        conn.session().respond_error(request_id, "the link is in use");
      return;
    case schema::Envelope::Body::ALLOCATION_START:
      return allocation_start(sender, request_id, body.getAllocationStart());
    case schema::Envelope::Body::ALLOCATION_END:
      return allocation_end(sender, request_id,
                            wire::decode_allocation_end(body.getAllocationEnd()));
    case schema::Envelope::Body::ALLOCATION_INFO:
      if (request_id == 0) return;
      return allocation_info(sender, request_id, body.getAllocationInfo().getAllocationId());
    case schema::Envelope::Body::AGENT_STATUS:
      if (request_id == 0) return;
      return status_request(sender, request_id, body.getAgentStatus());
    case schema::Envelope::Body::HEARTBEAT:
      if (request_id) conn.session().respond(request_id, rpc::Outgoing());
      return;
    default:
      if (request_id) conn.session().respond_error(request_id, "method not served by this agent");
      return;
  }
}

void Agent::launch_processes(const Sender& sender, uint64_t request_id,
                             schema::LaunchProcessesRequest::Reader request) {
  rpc::Session& session = *session_of(sender.conn);
  auto refuse = [&](const std::string& why) {
    LAT_LOG(warn, "launch", "refused a launch from ", secure::describe(sender.identity), ": ", why,
            log_fields({{"node", config_.node_id}, {"peer", sender.identity.name}}));
    session.respond_error(request_id, why);
  };
  if (auto allowed = may_start(sender, request.getRelayed()); !allowed)
    return refuse(allowed.error().message);
  if (shutting_down_) return refuse(cat("agent on ", config_.node_id, " is shutting down"));
  LaunchDefaults defaults;
  defaults.node_id = config_.node_id;
  defaults.fence_timeout_ms = config_.fence_timeout_ms;
  defaults.slurm_compat = config_.compat_set_slurm_env;
  defaults.max_world_size = config_.max_world_size;
  defaults.max_ranks_per_node = config_.max_ranks_per_node;
  defaults.agent_uid = static_cast<uint32_t>(::geteuid());
  defaults.allow_root_jobs = config_.allow_root_jobs;
  defaults.propagated = config_.propagate_limits;
  defaults.root_env_allowed = config_.allow_root_job_env;
  auto decoded = wire::decode_launch_request(request);
  if (!decoded) return refuse(decoded.error().message);
  Allocation* alloc =
      decoded->allocation_id.empty() ? nullptr : find_allocation(decoded->allocation_id);
  // A drain refuses new work only: a running allocation's steps and a running launch's spawns
  // are part of what goes on.
  if (!alloc && !decoded->spawned_by && !draining_.empty()) return refuse(refused_by_drain());
  if (alloc) {  // its launches get its CXI service (unless a key holder brings one) and flags
    if (!decoded->cxi) decoded->cxi = alloc->spec().cxi;
    decoded->slurm_compat = decoded->slurm_compat || alloc->spec().slurm_compat;
  }
  auto spec = make_launch_spec(*decoded, defaults);
  if (!spec) return refuse(spec.error().message);
  if (auto allowed =
          may_launch_in(*spec, alloc ? &alloc->spec() : nullptr, alloc && alloc->ending(), sender);
      !allowed)
    return refuse(allowed.error().message);
  if (spec->relayed) {
    if (auto allowed = may_start_relayed(*spec, spec->fence_tree(), sender); !allowed)
      return refuse(allowed.error().message);
    if (const auto& ca = credentials_.authority(); ca && spec->node_index != spec->head_node) {
      auto admitted = signed_relays_.admit(request, *spec, *ca, credentials_.revoked(),
                                           uint64_t(::time(nullptr)));
      if (!admitted)
        return refuse(cat("a relayed launch request for ", spec->launch_id, " from ",
                          secure::describe(sender.identity),
                          " refused: ", admitted.error().message));
    }
  }
  if (launches_.count(spec->launch_id))
    return refuse(cat("launch '", spec->launch_id, "' already exists"));
  // A spawned launch beside its parent's part here shares the node as the parent does
  // (--exclusive included); without it (that part ended) it is judged as any launch.
  LaunchEntry* parent = spec->spawned_by ? find_launch(spec->spawned_by->launch_id) : nullptr;
  if (spec->spawned_by) {
    LaunchEntry* family = find_launch(spec->spawned_by->family_id());
    if (auto allowed = may_join_family(*spec, parent ? &parent->launch->spec() : nullptr,
                                       family ? &family->launch->spec() : nullptr, sender);
        !allowed)
      return refuse(allowed.error().message);
  }
  if (parent && !parent->launch->ended()) {
    // A relayed parent came here through its parent node: its launcher is the name it gave.
    const LaunchSpec& p = parent->launch->spec();
    secure::Identity launcher{sender.identity.role, p.launcher_name};
    if (!p.relayed) {
      link::Connection* link = connection(parent->route->launcher_conn());
      launcher = link ? link->identity() : secure::Identity{};
    }
    if (auto allowed = may_spawn_beside(*spec, p, launcher, sender); !allowed)
      return refuse(allowed.error().message);
  } else {
    std::vector<NodeLaunch> running;
    for (const auto& [other, e] : launches_)
      if (e.launch && !e.launch->ended()) running.push_back(node_launch(e.launch->spec()));
    if (auto shared = may_share_node(*spec, running, config_.node_id); !shared)
      return refuse(shared.error().message);
  }

  std::string id = spec->launch_id;
  LaunchEntry& entry = launches_[id];
  LaunchRoute::Host& host = *this;
  entry.route = std::make_unique<LaunchRoute>(loop_, host, peers_, config_.node_id, sender.conn);
  entry.launch =
      std::make_unique<Launch>(loop_, std::move(spec.value()), environment_, *entry.route, peers_);
  Launch* raw = entry.launch.get();
  entry.route->attach(*raw);
  if (alloc) raw->set_allocation(launch_allocation(*alloc, raw->spec()));
  auto started = raw->start();
  if (!started) {
    launches_.erase(id);  // nothing was spawned
    return refuse(started.error().message);
  }
  LAT_LOG(info, "launch", id, ": accepted from ", secure::describe(sender.identity), ", ",
          raw->spec().local_ranks().size(), " ranks here as ", raw->spec().user.name,
          log_fields({{"launch", id},
                      {"node", config_.node_id},
                      {"uid", cat(raw->spec().user.uid)},
                      {"ranks", cat(raw->spec().local_ranks().size())}}));
  if (!raw->spec().env_left_out.empty())
    LAT_LOG(info, "launch", id,
            ": left out of the root job's environment: ", join(raw->spec().env_left_out, ", "),
            log_fields({{"launch", id}, {"node", config_.node_id}}));
  for (auto& e : early_.take(id)) {
    if (e.fence) deliver_fence(entry, std::move(*e.fence), e.sender);
    if (!e.abort) continue;
    if (auto allowed = may_abort(raw->spec(), entry.route->launcher_conn(), e.sender); !allowed)
      LAT_LOG(warn, "auth", allowed.error().message,
              log_fields(
                  {{"launch", id}, {"node", config_.node_id}, {"peer", e.sender.identity.name}}));
    else
      deliver_abort(entry, std::move(*e.abort), e.sender);
  }
  if (entry.route->relayed()) entry.route->relay_request(request);
  session.respond(request_id,
                  wire::launch_accepted({config_.node_id, raw->bindings(), raw->elapsed_us(), true,
                                         raw->spec().env_left_out, raw->unenforced_limits()}));
}

void Agent::abort_processes(const Sender& sender, uint64_t request_id,
                            schema::AbortProcesses::Reader abort) {
  rpc::Session& session = *session_of(sender.conn);
  LaunchEntry* entry = find_launch(abort.getLaunchId());
  if (!entry && sender.identity.role == secure::Role::agent) {
    // The head's abort can overtake the launcher's request to this agent: hold it like an early
    // fence chunk, and judge it when the launch arrives.
    hold_early(abort.getLaunchId(),
               EarlyMessage{std::nullopt, lattice::wire::decode_abort(abort), sender});
    if (request_id) session.respond(request_id, rpc::Outgoing());
    return;
  }
  if (entry && may_adopt(entry->launch->spec(), entry->route->launcher_conn(), sender))
    entry->route->adopt(sender);
  Status allowed = entry ? may_abort(entry->launch->spec(), entry->route->launcher_conn(), sender)
                         : Status(make_error(cat("no launch '", abort.getLaunchId().cStr(), "'")));
  if (!allowed) {
    if (entry)
      LAT_LOG(warn, "auth", allowed.error().message,
              log_fields({{"launch", entry->launch->spec().launch_id},
                          {"node", config_.node_id},
                          {"peer", sender.identity.name}}));
    if (request_id) session.respond_error(request_id, allowed.error().message);
    return;
  }
  deliver_abort(*entry, lattice::wire::decode_abort(abort), sender);
  if (request_id) session.respond(request_id, rpc::Outgoing());
}

void Agent::deliver_abort(LaunchEntry& entry, Failure failure, const Sender& sender) {
  // A relayed launch's launcher speaks through the node's parent, on the link it came on.
  if (sender.identity.role == secure::Role::launcher || sender.conn == entry.route->launcher_conn())
    return entry.launch->abort_received(policy::FromLauncher{}, std::move(failure));
  entry.launch->abort_received(policy::FromNode{node_of(entry.launch->spec(), sender.identity)},
                               std::move(failure));
}

void Agent::signal_processes(const Sender& sender, uint64_t request_id, const wire::Signal& sig) {
  rpc::Session& session = *session_of(sender.conn);
  LaunchEntry* entry = find_launch(sig.launch_id);
  Status allowed = entry ? may_signal(entry->launch->spec(), entry->route->launcher_conn(), sender)
                         : Status(make_error(cat("no launch '", sig.launch_id, "'")));
  if (!allowed) {
    if (entry)
      LAT_LOG(warn, "auth", allowed.error().message,
              log_fields({{"launch", entry->launch->spec().launch_id},
                          {"node", config_.node_id},
                          {"peer", sender.identity.name}}));
    if (request_id) session.respond_error(request_id, allowed.error().message);
    return;
  }
  entry->launch->forward_signal(sig.signum);
  if (request_id) session.respond(request_id, rpc::Outgoing());
}

void Agent::connection_closed(uint64_t conn_id, const Error& why) {
  auto it = connections_.find(conn_id);
  bool authenticated = it != connections_.end() && it->second->established();
  std::string who = it == connections_.end() ? std::string("?") : it->second->peer();
  slots_.closed(conn_id);
  if (!authenticated && it != connections_.end() && !it->second->refusal().empty())
    metrics_.refused(it->second->refusal());
  if (!authenticated)
    LAT_LOG_LIMITED(
        refusals_, warn, "link", log_cause(why.message), "refused ", who, ": ", why.message,
        log_fields({{"peer", who},
                    {"cause", it == connections_.end() ? std::string("?")
                                                       : std::string(it->second->refusal())}}));
  else if (why.kind == ErrorKind::closed_by_peer || why.kind == ErrorKind::closed_here)
    LAT_LOG(debug, "link", "connection ", conn_id, " (", secure::describe(it->second->identity()),
            ") closed: ", why.message);
  else
    LAT_LOG(info, "link", "connection ", conn_id, " (", secure::describe(it->second->identity()),
            ") lost: ", why.message, log_fields({{"node", config_.node_id}, {"peer", who}}));
  for (auto& [id, entry] : launches_)
    if (entry.route->launcher_conn() == conn_id) entry.route->launcher_lost(why.message);
  for (auto& [id, alloc] : allocations_)
    if (alloc->owner_conn() == conn_id)
      alloc->end(cat("the link that started it was lost (", why.message, ")"));
  peers_.closed(conn_id, why);
  reaper_.start(0, 0, [this] { reap(); });
}

void Agent::sweep() {
  uint64_t now = loop_.now_ms();
  std::vector<uint64_t> idle;
  for (auto& [id, conn] : connections_) {
    conn->session().expire(now);
    if (conn->open() && conn->established() &&
        now - conn->last_activity_ms() >= config_.idle_timeout_ms)
      idle.push_back(id);
  }
  for (uint64_t id : idle) {
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    LAT_LOG(info, "link", "closing connection ", id, " (", secure::describe(it->second->identity()),
            "): silent for ", config_.idle_timeout_ms / 1000.0, " s",
            log_fields({{"node", config_.node_id}, {"peer", it->second->peer()}}));
    it->second->close();
    connection_closed(id, make_error("idle"));
  }
  // What ended launches and closed links freed goes back to the system, so a burst (a big
  // launch, a flood of connections) does not pin the agent's RSS at its peak. Only once the
  // agent is quiet: trimming between back-to-back launches would just fault the pages back in.
  if (trim_pending_ && launches_.empty() && now - last_reap_ms_ >= kTrimQuietMs) {
    ::malloc_trim(0);
    trim_pending_ = false;
  }
  // Also what a head relays to a node whose part of the launch has already ended.
  for (const auto& [launch, count] : early_.expire(now))
    LAT_LOG(debug, "link", "dropping ", count, " messages for launch ", launch,
            ", which is not running here");
  // Relays that ended here and still pass reports up are let go once settled or too old.
  bool lingering = std::any_of(launches_.begin(), launches_.end(),
                               [](const auto& e) { return e.second.launch->ended(); });
  if (lingering) reaper_.start(0, 0, [this] { reap(); });
  // Nothing left to watch: an idle agent keeps no timer armed (it would wake for nothing).
  if (connections_.empty() && early_.empty() && !trim_pending_ && !lingering) sweeper_.stop();
}

void Agent::arm_sweeper() {
  if (!sweeper_.active() && !shutting_down_)
    sweeper_.start(kSweepPeriodMs, kSweepPeriodMs, [this] { sweep(); });
}

link::Connection* Agent::open_connection(uint64_t id) {
  auto it = connections_.find(id);
  return it != connections_.end() && it->second->open() ? it->second.get() : nullptr;
}

void Agent::drained(uint64_t id) {
  for (auto& [launch_id, entry] : launches_)
    if (entry.route->launcher_conn() == id) entry.route->resume_output();
}

rpc::Session* Agent::session_of(uint64_t conn_id) { return &connections_.at(conn_id)->session(); }

void Agent::reap() {
  for (uint64_t id : closed_admin_) admin_clients_.erase(id);
  closed_admin_.clear();
  trim_pending_ = true;
  last_reap_ms_ = loop_.now_ms();
  arm_sweeper();
  const uint64_t now = loop_.now_ms();
  for (auto it = launches_.begin(); it != launches_.end();) {
    if (!it->second.route->reapable(now)) {
      ++it;
      continue;
    }
    ended_peers_[it->first] = it->second.launch->spec().peers;
    ended_order_.push_back(it->first);
    if (ended_order_.size() > kEndedLaunchesKept) {
      ended_peers_.erase(ended_order_.front());
      ended_order_.pop_front();
    }
    it = launches_.erase(it);
  }
  reap_allocations();
  for (auto it = connections_.begin(); it != connections_.end();)
    it = it->second->open() ? std::next(it) : connections_.erase(it);
  if (shutting_down_ && launches_.empty() && allocations_.empty()) {
    LAT_LOG(info, "agent", "every launch has ended; exiting");
    connections_.clear();
    admin_clients_.clear();
    listener_.reset();
    admin_listener_.reset();
    metrics_endpoint_.reset();
    user_door_.reset();
    signals_.clear();
    sweeper_.stop();
    loop_.stop();
  }
}

Agent::LaunchEntry* Agent::find_launch(const std::string& id) {
  auto it = launches_.find(id);
  return it == launches_.end() ? nullptr : &it->second;
}

}  // namespace lattice::agent
