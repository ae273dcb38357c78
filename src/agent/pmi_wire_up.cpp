#include "agent/pmi_wire_up.hpp"

#include <algorithm>
#include <set>

#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "net/loopback_owner.hpp"
#include "net/peer_credentials.hpp"
#include "pmi/mapping.hpp"
#include "secure/secret.hpp"

namespace lattice::agent {
namespace {

// One random, distinct PMI_ID per local rank: MPICH reads it with atoi(), so it is a decimal
// int (31 random bits); with the port open only to the job's user and each id good once, a
// guess gains nothing.
std::map<int, std::string> issue_port_ids(const LaunchSpec& spec) {
  std::map<int, std::string> ids;
  if (!spec.use_pmi_port) return ids;
  std::set<uint32_t> used;
  for (int rank : spec.local_ranks()) {
    uint32_t id = 0;
    while (id == 0 || !used.insert(id).second) {
      secure::random_bytes(&id, sizeof id);
      id &= 0x7fffffff;
    }
    ids[rank] = std::to_string(id);
  }
  return ids;
}

pmi::LaunchInfo pmi_info(const LaunchSpec& spec, const std::map<int, std::string>& port_ids) {
  pmi::LaunchInfo info;
  info.jobid = spec.launch_id;
  info.world_size = spec.world_size;
  info.local_ranks = spec.local_ranks();
  info.process_mapping = pmi::process_mapping(spec.rank_nodes);
  for (int rank : info.local_ranks) info.appnums.push_back(spec.app_of(rank));
  for (const auto& [rank, id] : port_ids) info.port_ids[id] = rank;
  return info;
}

}  // namespace

PmiWireUp::PmiWireUp(net::Loop& loop, const LaunchSpec& spec, const Clock& clock,
                     LaunchNames& names, WireUpEvents& events)
    : loop_(loop),
      spec_(spec),
      clock_(clock),
      names_(names),
      events_(events),
      port_ids_(issue_port_ids(spec)),
      pmi_(pmi_info(spec, port_ids_), *this),
      local_count_(spec.local_ranks().size()),
      upkeep_timer_(loop) {}

Status PmiWireUp::open(LaunchDir& dir) {
  const std::string name = "pmi.sock";
  auto listener = net::UnixListener::listen(
      loop_, dir.entry(name), [this](auto stream) { admit(std::move(stream), Door::socket); });
  if (!listener)
    return make_error(cat("PMI socket ", dir.entry(name), ": ", listener.error().message));
  socket_listener_ = std::move(listener.value());
  if (auto given = dir.give(name); !given) return given;
  if (spec_.use_pmi_port) {
    auto tcp = net::TcpListener::listen(
        loop_, "127.0.0.1", 0, [this](auto stream) { admit(std::move(stream), Door::port); });
    if (!tcp) return make_error(cat("PMI port: ", tcp.error().message));
    port_listener_ = std::move(tcp.value());
  }
  return {};
}

Status PmiWireUp::rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) {
  if (port_listener_) {
    auto bound = port_listener_->bound();
    in.pmi_port = cat(bound.host, ':', bound.port);
    in.pmi_id = port_ids_.at(rank);
  } else {
    spawn.channel = true;  // the rank's PMI_FD
    in.pmi_fd = 3;
  }
  return {};
}

void PmiWireUp::rank_started(int rank, net::Process& process) {
  if (auto channel = process.take_channel()) serve(std::move(channel), Door::rank_fd, rank);
}

void PmiWireUp::admit(std::unique_ptr<net::Stream> stream, Door door) {
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
    LAT_LOG_LIMITED(
        refusals_, warn, "auth", door == Door::socket ? "socket" : "port", spec_.launch_id,
        ": refused a PMI connection on the ", door == Door::socket ? "socket" : "port", " from ",
        uid ? cat("uid ", *uid) : why, " (the job runs as uid ", spec_.user.uid, ")",
        log_fields({{"launch", spec_.launch_id}, {"uid", uid ? cat(*uid) : std::string("-")}}));
    return;  // dropping the stream closes it
  }
  serve(std::move(stream), door, std::nullopt);
}

void PmiWireUp::serve(std::unique_ptr<net::Stream> stream, Door door, std::optional<int> rank) {
  pmi::ConnId id = door == Door::port ? pmi_.connect_port() : pmi_.connect(rank);
  stream->set_write_limit(kRankWriteLimitBytes);
  net::Stream* s = stream.get();
  conns_[id] = Conn{std::move(stream), rank.value_or(-1)};
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

void PmiWireUp::send(pmi::ConnId conn, std::string bytes) {
  auto it = conns_.find(conn);
  if (it != conns_.end() && it->second.stream) it->second.stream->write(std::move(bytes));
}

void PmiWireUp::client_failed(pmi::ConnId conn, int rank, std::string message) {
  auto it = conns_.find(conn);
  bool lost = it != conns_.end() && !it->second.stream;
  if (it != conns_.end()) {
    if (rank < 0) rank = it->second.rank;
    conns_.erase(it);
  }
  if (!lost && rank < 0) {
    // A socket or port client that never proved which rank it is speaks for no rank: dropping
    // it is enough, and no stranger's garbage can end the job.
    LAT_LOG(warn, "pmi", spec_.launch_id, ": dropped an unidentified PMI client: ", message,
            log_fields({{"launch", spec_.launch_id}}));
    return;
  }
  events_.rank_failed(rank, std::move(message), lost);
}

bool PmiWireUp::name_request(pmi::ConnId conn, pmi::NameOp op, const std::string& name,
                             const std::string& port) {
  names_.request(op, name, port, [this, conn](const Result<std::string>& answer) {
    pmi_.name_answer(conn, answer);
  });
  return true;
}

void PmiWireUp::trace(pmi::ConnId conn, char direction, std::string_view message) {
  LAT_LOG(trace, "pmi", spec_.launch_id, " conn ", conn, ' ', direction, ": ", message);
}

// A fence is pending when some local rank is parked in it; it started when the first one
// entered (a parked rank's last activity is its fence request).
std::optional<FenceWait> PmiWireUp::fence_waiting() const {
  std::optional<FenceWait> wait;
  for (const auto& st : pmi_.status()) {
    if (st.state != pmi::RankState::in_fence) continue;
    if (!wait) wait = FenceWait{st.fences_entered, st.last_activity_ms};
    wait->since_ms = std::min(wait->since_ms, st.last_activity_ms);
    wait->epoch = std::max<uint64_t>(wait->epoch, st.fences_entered);
  }
  return wait;
}

void PmiWireUp::modex_asked(int from, int, std::function<void(Result<std::string>)> answer) {
  answer(make_error(cat("launch ", spec_.launch_id, " does not use PMIx on ",
                        spec_.peers[static_cast<size_t>(spec_.node_index)].node_id,
                        " (asked by node ", from, ")")));
}

void PmiWireUp::close() {
  conns_.clear();
  socket_listener_.reset();  // removes the socket file
  port_listener_.reset();
}

}  // namespace lattice::agent
