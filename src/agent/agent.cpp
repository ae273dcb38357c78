#include "agent/agent.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <csignal>
#include <cstring>
#include <filesystem>

#include "base/log.hpp"
#include "lattice_version.h"

namespace lattice::agent {
namespace {

// Pending rpc calls are checked against their deadlines this often.
constexpr uint64_t kExpiryPeriodMs = 500;
// Fence chunks held for launches this agent has not been asked to run yet: enough for a large
// store arriving early from several children, bounded so a confused peer cannot fill memory.
constexpr size_t kMaxEarlyFenceMessages = 16384;

// Start-up only (before the loop runs): a connect to a Unix socket answers or fails at once.
bool unix_socket_answers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

// PmiFence (up) and PmiFenceComplete (down) carry a chunk the same way.
template <class Reader>
FenceMessage decode_fence(Reader m, bool down) {
  FenceMessage out;
  out.launch_id = m.getLaunchId();
  out.down = down;
  out.from = static_cast<int>(m.getFromNode());
  out.chunk.epoch = m.getEpoch();
  out.chunk.index = m.getChunkIndex();
  out.chunk.count = m.getChunkCount();
  for (auto e : m.getEntries()) out.chunk.entries.emplace_back(e.getKey(), e.getValue());
  return out;
}

}  // namespace

Agent::Agent(net::Loop& loop, config::AgentConfig config, LaunchEnvironment environment)
    : loop_(loop),
      config_(std::move(config)),
      environment_(std::move(environment)),
      started_ms_(loop.now_ms()),
      peers_(loop, config_.heartbeat_interval_ms, config_.heartbeat_misses,
             [this](const std::string& peer, const std::string& reason) {
               for (auto& [id, entry] : launches_) entry.launch->peer_lost(peer, reason);
             }),
      reaper_(loop),
      expiry_(loop) {}

Agent::~Agent() = default;

Status Agent::start(int ready_fd) {
  auto listener = net::TcpListener::listen(loop_, config_.listen_host, config_.listen_port,
                                           [this](auto stream) { accept(std::move(stream)); });
  if (!listener)
    return make_error(cat("cannot listen on ", config_.listen_host, ':', config_.listen_port,
                          ": ", listener.error().message));
  listener_ = std::move(listener.value());
  if (!config_.admin_socket.empty()) {
    auto admin = net::UnixListener::listen(loop_, config_.admin_socket,
                                           [this](auto stream) { accept_admin(std::move(stream)); });
    if (!admin)
      return make_error(cat("admin socket ", config_.admin_socket, ": ", admin.error().message));
    admin_listener_ = std::move(admin.value());
  }
  for (int signum : {SIGTERM, SIGINT})
    signals_.push_back(std::make_unique<net::SignalWatcher>(
        loop_, signum, [this](int s) { shutdown(s); }));
  expiry_.start(kExpiryPeriodMs, kExpiryPeriodMs, [this] {
    uint64_t now = loop_.now_ms();
    for (auto& [id, conn] : connections_) conn->session().expire(now);
  });

  remove_stale_pmi_sockets();
  auto bound = listener_->bound();
  LAT_LOG(info, "agent", "node ", config_.node_id, " listening on ", bound.host, ':', bound.port,
          ", admin socket ", config_.admin_socket);
  if (ready_fd >= 0) {
    std::string line = cat(bound.host, ':', bound.port, '\n');
    if (::write(ready_fd, line.data(), line.size()) < 0)
      LAT_LOG(warn, "agent", "cannot write to --ready-fd ", ready_fd);
    ::close(ready_fd);
  }
  return {};
}

// A crashed agent leaves its launches' PMI sockets behind; nobody answers on them any more.
void Agent::remove_stale_pmi_sockets() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(config_.pmi_socket_dir, ec)) {
    std::string name = entry.path().filename();
    if (!starts_with(name, "lattice-pmi-") || !entry.is_socket(ec)) continue;
    if (unix_socket_answers(entry.path())) continue;
    LAT_LOG(info, "agent", "removing stale PMI socket ", entry.path().string());
    std::filesystem::remove(entry.path(), ec);
  }
}

void Agent::accept(std::unique_ptr<net::Stream> stream) {
  if (shutting_down_) return;  // dropping the stream closes it
  uint64_t id = next_conn_id_++;
  LAT_LOG(debug, "rpc", "connection ", id, " from ", stream->peer());
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, id](uint64_t request_id, schema::Envelope::Reader envelope) {
    on_message(id, request_id, envelope);
  };
  connections_[id] = std::make_unique<link::Connection>(
      std::move(stream), std::move(handlers),
      [this, id](const std::string& reason) { connection_closed(id, reason); });
}

void Agent::on_message(uint64_t conn_id, uint64_t request_id, schema::Envelope::Reader envelope) {
  auto& session = connections_.at(conn_id)->session();
  auto body = envelope.getBody();
  switch (body.which()) {
    case schema::Envelope::Body::LAUNCH_PROCESSES:
      if (request_id == 0) return;  // a launch needs a reply channel
      launch_processes(conn_id, request_id, body.getLaunchProcesses());
      return;
    case schema::Envelope::Body::PMI_FENCE:
      return fence_message(decode_fence(body.getPmiFence(), false));
    case schema::Envelope::Body::PMI_FENCE_COMPLETE: {
      auto down = body.getPmiFenceComplete();
      auto message = decode_fence(down, true);
      message.error = down.getErrorMessage();
      return fence_message(std::move(message));
    }
    case schema::Envelope::Body::ABORT_PROCESSES: {
      auto abort = body.getAbortProcesses();
      Launch* launch = find_launch(abort.getLaunchId());
      if (launch)
        launch->abort_from_peer(Failure{abort.getReason(), 1, -1, abort.getFenceEpoch()});
      if (request_id) {
        if (launch)
          session.respond(request_id, rpc::Outgoing());
        else
          session.respond_error(request_id, cat("no launch '", abort.getLaunchId().cStr(), "'"));
      }
      return;
    }
    case schema::Envelope::Body::SIGNAL_PROCESSES: {
      auto sig = body.getSignalProcesses();
      if (Launch* launch = find_launch(sig.getLaunchId())) launch->forward_signal(sig.getSignal());
      if (request_id) session.respond(request_id, rpc::Outgoing());
      return;
    }
    case schema::Envelope::Body::HEARTBEAT:
      if (request_id) session.respond(request_id, rpc::Outgoing());
      return;
    default:
      if (request_id) session.respond_error(request_id, "method not served by this agent");
      return;
  }
}

void Agent::launch_processes(uint64_t conn_id, uint64_t request_id,
                             schema::LaunchProcessesRequest::Reader request) {
  auto& session = connections_.at(conn_id)->session();
  if (shutting_down_) return session.respond_error(request_id, "agent is shutting down");
  LaunchDefaults defaults{config_.node_id, config_.fence_timeout_ms, config_.tree_fanout,
                          config_.compat_set_slurm_env};
  auto spec = decode_launch_request(request, defaults);
  if (!spec) return session.respond_error(request_id, spec.error().message);
  if (launches_.count(spec->launch_id))
    return session.respond_error(request_id, cat("launch '", spec->launch_id, "' already exists"));

  std::string id = spec->launch_id;
  auto launch =
      std::make_unique<Launch>(loop_, std::move(spec.value()), environment_,
                               static_cast<LaunchSink&>(*this), peers_);
  Launch* raw = launch.get();
  launches_[id] = LaunchEntry{std::move(launch), conn_id};
  auto started = raw->start();
  if (!started) {
    launches_.erase(id);  // nothing was spawned
    return session.respond_error(request_id, started.error().message);
  }
  if (auto early = early_fence_.find(id); early != early_fence_.end()) {
    auto messages = std::move(early->second);
    early_fence_.erase(early);
    early_fence_count_ -= messages.size();
    for (auto& message : messages) raw->fence_message(std::move(message));
  }
  rpc::Outgoing reply;
  reply.envelope().initBody().initLaunchAccepted().setNodeId(config_.node_id);
  session.respond(request_id, std::move(reply));
}

void Agent::fence_message(FenceMessage message) {
  if (Launch* launch = find_launch(message.launch_id)) return launch->fence_message(std::move(message));
  if (early_fence_count_ >= kMaxEarlyFenceMessages) {
    LAT_LOG(warn, "fence", "dropping a fence message for unknown launch ", message.launch_id);
    return;
  }
  ++early_fence_count_;
  early_fence_[message.launch_id].push_back(std::move(message));
}

void Agent::connection_closed(uint64_t conn_id, const std::string& reason) {
  LAT_LOG(debug, "rpc", "connection ", conn_id, " closed: ", reason);
  for (auto& [id, entry] : launches_) {
    if (entry.launcher_conn != conn_id || entry.launch->ended()) continue;
    entry.launch->fail(Failure{cat("the launcher's connection was lost (", reason, ")"), 1, -1});
  }
  reaper_.start(0, 0, [this] { reap(); });
}

void Agent::notify(uint64_t conn_id, rpc::Outgoing message) {
  auto it = connections_.find(conn_id);
  if (it != connections_.end() && it->second->open()) it->second->session().notify(std::move(message));
}

void Agent::output(Launch& launch, int rank, bool is_stderr, std::string data) {
  rpc::Outgoing msg;
  auto chunk = msg.envelope().initBody().initOutput();
  chunk.setLaunchId(launch.id());
  chunk.setRank(static_cast<uint32_t>(rank));
  chunk.setStream(is_stderr ? schema::OutputStream::STDERR : schema::OutputStream::STDOUT);
  chunk.setData(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(data.data()), data.size()));
  notify(launches_.at(launch.id()).launcher_conn, std::move(msg));
}

void Agent::rank_exited(Launch& launch, int rank, int pid, proc::ExitStatus status) {
  rpc::Outgoing msg;
  auto exit = msg.envelope().initBody().initRankExit();
  exit.setLaunchId(launch.id());
  exit.setRank(static_cast<uint32_t>(rank));
  exit.setNodeIndex(static_cast<uint32_t>(launch.spec().node_index));
  exit.setExitCode(status.code);
  exit.setSignal(status.signal);
  exit.setPid(pid);
  notify(launches_.at(launch.id()).launcher_conn, std::move(msg));
}

void Agent::ended(Launch& launch, const std::optional<Failure>& failure,
                  const std::vector<std::string>& stragglers, const LaunchTimes& times) {
  rpc::Outgoing msg;
  auto end = msg.envelope().initBody().initLaunchEnded();
  end.setLaunchId(launch.id());
  end.setNodeIndex(static_cast<uint32_t>(launch.spec().node_index));
  end.setFailed(failure.has_value());
  end.setReason(failure ? failure->reason : "");
  end.setExitCode(failure ? failure->exit_code : 0);
  end.setFailedRank(failure ? failure->rank : -1);
  auto late = end.initStragglers(static_cast<unsigned>(stragglers.size()));
  for (unsigned i = 0; i < late.size(); ++i) late.set(i, stragglers[i]);
  auto t = end.initTimings();
  t.setSpawnedUs(times.spawned_us);
  t.setFirstInitUs(times.first_init_us);
  t.setLastFinalizeUs(times.last_finalize_us);
  t.setExitedUs(times.exited_us);
  notify(launches_.at(launch.id()).launcher_conn, std::move(msg));
  LAT_LOG(info, "launch", launch.id(), ": ended", failure ? ": " + failure->reason : "");
  reaper_.start(0, 0, [this] { reap(); });
}

void Agent::reap() {
  for (auto it = launches_.begin(); it != launches_.end();)
    it = it->second.launch->ended() ? launches_.erase(it) : std::next(it);
  for (auto it = connections_.begin(); it != connections_.end();)
    it = it->second->open() ? std::next(it) : connections_.erase(it);
  if (shutting_down_ && launches_.empty()) {
    LAT_LOG(info, "agent", "every launch has ended; exiting");
    connections_.clear();
    admin_clients_.clear();
    listener_.reset();
    admin_listener_.reset();
    signals_.clear();
    expiry_.stop();
    loop_.stop();
  }
}

void Agent::shutdown(int signum) {
  if (shutting_down_) {
    LAT_LOG(warn, "agent", "second signal: killing every rank now");
    for (auto& [id, entry] : launches_) entry.launch->fail(Failure{"agent killed", 1, -1}, SIGKILL);
    return;
  }
  shutting_down_ = true;
  LAT_LOG(info, "agent", "signal ", signum, ": ending ", launches_.size(), " launches");
  listener_.reset();
  for (auto& [id, entry] : launches_)
    entry.launch->fail(
        Failure{cat("agent on ", config_.node_id, " is shutting down (signal ", signum, ")"), 1,
                -1},
        SIGTERM);
  reaper_.start(0, 0, [this] { reap(); });
}

Launch* Agent::find_launch(const std::string& id) {
  auto it = launches_.find(id);
  return it == launches_.end() ? nullptr : it->second.launch.get();
}

}  // namespace lattice::agent
