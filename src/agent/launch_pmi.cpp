// The PMI side of a launch: its doors (the PMI_FD socketpairs, the per-launch Unix socket in a
// directory only the job's user can enter, the optional PMI_PORT listener that admits only
// the job's user), the server's hooks (responses, fences, aborts, client failures), and the
// watchdog for fence deadlines and ranks that dropped PMI without finalize.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "agent/launch.hpp"
#include "agent/launch_rank.hpp"
#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "net/loopback_owner.hpp"
#include "net/peer_credentials.hpp"

namespace lattice::agent {

Status Launch::open_doors() {
  const JobUser& user = spec_.user;
  auto dir = env_.socket_dir->make_launch_dir(user.uid, user.gid, env_.agent_is_root);
  if (!dir) return dir.error();
  launch_dir_ = std::make_unique<LaunchDir>(std::move(dir.value()));
  if (auto hatch = hatch_.open(*launch_dir_, env_.mpi_launcher); !hatch) return hatch;
  // libpmix's own listener is the PMIx launches' door; their directory holds its files.
  if (!pmix_) {
    const std::string name = "pmi.sock";
    auto listener = net::UnixListener::listen(loop_, launch_dir_->entry(name), [this](auto stream) {
      admit(std::move(stream), Door::socket);
    });
    if (!listener)
      return make_error(
          cat("PMI socket ", launch_dir_->entry(name), ": ", listener.error().message));
    socket_listener_ = std::move(listener.value());
    if (auto given = launch_dir_->give(name); !given) return given;
  }
  // Last: until now the directory was the agent's, so no name in it could be swapped.
  if (auto given = launch_dir_->hand_over(); !given) return given;
  if (spec_.use_pmi_port && !pmix_) {
    auto tcp = net::TcpListener::listen(
        loop_, "127.0.0.1", 0, [this](auto stream) { admit(std::move(stream), Door::port); });
    if (!tcp) return make_error(cat("PMI port: ", tcp.error().message));
    port_listener_ = std::move(tcp.value());
  }
  return {};
}

void Launch::admit(std::unique_ptr<net::Stream> stream, Door door) {
  // The socket's directory already keeps others out; checking the peer too costs nothing and
  // holds if someone loosens the directory. The port is open to every local user: the kernel
  // tells who owns the connecting socket.
  std::optional<uint32_t> uid;
  std::string why;
  if (door == Door::socket) {
    if (auto cred = net::peer_credentials(*stream))
      uid = cred->uid;
    else
      why = "no peer credentials";
  } else {
    auto owner = net::loopback_peer_uid(*stream);
    if (owner)
      uid = *owner;
    else
      why = owner.error().message;
  }
  if (!uid || (*uid != spec_.user.uid && *uid != 0)) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", door == Door::socket ? "socket" : "port",
                    spec_.launch_id, ": refused a PMI connection on the ",
                    door == Door::socket ? "socket" : "port", " from ",
                    uid ? cat("uid ", *uid) : why, " (the job runs as uid ", spec_.user.uid, ")");
    return;  // dropping the stream closes it
  }
  serve_pmi(std::move(stream), door, std::nullopt);
}

void Launch::serve_pmi(std::unique_ptr<net::Stream> stream, Door door, std::optional<int> rank) {
  pmi::ConnId id = door == Door::port ? pmi_.connect_port() : pmi_.connect(rank);
  stream->set_write_limit(kPmiWriteLimitBytes);
  net::Stream* s = stream.get();
  conns_[id] = PmiConn{std::move(stream), rank.value_or(-1)};
  s->start([this, id](std::string_view bytes) { pmi_.receive(id, bytes); },
           [this, id](const Error&) {
             // Mark the connection gone before telling the engine, so that a client_failed
             // raised from eof() is known to be about a lost connection, not bad bytes.
             auto it = conns_.find(id);
             if (it == conns_.end()) return;
             it->second.stream.reset();
             pmi_.eof(id);
           });
}

void Launch::send(pmi::ConnId conn, std::string bytes) {
  auto it = conns_.find(conn);
  if (it != conns_.end() && it->second.stream) it->second.stream->write(std::move(bytes));
}

void Launch::fence_ready(uint64_t epoch, pmi::KvList local_puts) {
  LAT_LOG(debug, "fence", spec_.launch_id, ": local ranks entered fence ", epoch, " with ",
          local_puts.size(), " puts");
  fence_phase(epoch, FencePhase::entered);
  fence_->enter(epoch, std::move(local_puts));
}

void Launch::abort_requested(int rank, std::optional<int> exit_code, std::string message) {
  run(policy_.pmi_abort(rank, exit_code, message));
}

void Launch::client_failed(pmi::ConnId conn, int rank, std::string message) {
  auto it = conns_.find(conn);
  bool lost = it != conns_.end() && !it->second.stream;
  if (it != conns_.end()) {
    if (rank < 0) rank = it->second.rank;
    conns_.erase(it);
  }
  // Usually the rank is exiting: its status, if it comes in time, says more.
  if (lost) return run(policy_.pmi_lost(rank, message));
  if (rank < 0) {
    // A socket or port client that never proved which rank it is speaks for no rank: dropping
    // it is enough, and no stranger's garbage can end the job.
    LAT_LOG(warn, "pmi", spec_.launch_id, ": dropped an unidentified PMI client: ", message);
    return;
  }
  run(policy_.pmi_error(rank, message));
}

// Names live at the head agent: there a request is answered on the next loop turn (never from
// inside the engine's hook), elsewhere it is a call to the head, within the fence timeout.
bool Launch::name_request(pmi::ConnId conn, pmi::NameOp op, const std::string& name,
                          const std::string& port) {
  uint64_t id = ++name_id_;
  name_waiting_[id] = conn;
  if (spec_.head_node != spec_.node_index) {
    peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)],
                wire::name_request({spec_.launch_id, op, name, port}), spec_.fence_timeout_ms,
                [this, alive = std::weak_ptr<int>(alive_), id](auto reply) {
                  if (!alive.expired()) name_answered(id, wire::decode_name_answer(reply));
                });
    return true;
  }
  names_ready_.emplace_back(id, names_.apply(op, name, port));
  name_timer_.start(0, 0, [this] {
    auto ready = std::move(names_ready_);
    names_ready_.clear();
    for (auto& [t, answer] : ready) name_answered(t, answer);
  });
  return true;
}

void Launch::name_answered(uint64_t id, const Result<std::string>& answer) {
  auto it = name_waiting_.find(id);
  if (it == name_waiting_.end()) return;
  pmi::ConnId conn = it->second;
  name_waiting_.erase(it);
  pmi_.name_answer(conn, answer);
}

Result<std::string> Launch::name_asked(const wire::NameRequest& request) {
  return names_.apply(request.op, request.name, request.port);
}

void Launch::rank_initialized(int rank) {
  if (Rank* r = find_rank(rank)) r->initialized = true;
  if (times_.first_init_us == 0) {
    times_.first_init_us = elapsed_us();
    hold_neighbour_links();
  }
}

void Launch::rank_finalized(int rank) {
  if (Rank* r = find_rank(rank)) r->finalized = true;
  if (++finalized_ == static_cast<int>(ranks_.size())) times_.last_finalize_us = elapsed_us();
}

void Launch::trace(pmi::ConnId conn, char direction, std::string_view message) {
  LAT_LOG(trace, "pmi", spec_.launch_id, " conn ", conn, ' ', direction, ": ", message);
}

void Launch::check_fence_deadline() {
  if (policy_.failure()) return;
  uint64_t now = now_ms();
  // A fence is pending when some local rank is parked in it; it started when the first one
  // entered (a parked rank's last activity is its fence request).
  uint64_t started = pmix_fence_started_ms();
  uint64_t epoch = pmix_epoch_;
  for (const auto& st : pmi_.status()) {
    if (st.state != pmi::RankState::in_fence) continue;
    if (started == 0 || st.last_activity_ms < started) started = st.last_activity_ms;
    epoch = std::max<uint64_t>(epoch, st.fences_entered);
  }
  if (started == 0 || now - started < spec_.fence_timeout_ms) return;
  auto actions = policy_.fence_timed_out(epoch, spec_.fence_timeout_ms);
  // The ranks parked in it, and the children's, hear the same words as the launcher.
  std::string message = policy::describe(*policy_.failure());
  if (pmix_)
    pmix_fence_failed(epoch, message);
  else
    pmi_.fence_failed(epoch, message);
  if (tree_fence_) tree_fence_->fail_down(epoch, message);
  run(std::move(actions));
}

std::vector<wire::Straggler> Launch::stragglers(uint64_t epoch) const {
  std::vector<wire::Straggler> out;
  uint64_t now = env_.clock->now_ms();
  for (const auto& st : pmi_.status())
    if (st.fences_entered < epoch)
      out.push_back(wire::Straggler{st.rank, std::string(pmi::rank_state_name(st.state)),
                                    st.last_command, now - st.last_activity_ms});
  return out;
}

}  // namespace lattice::agent
