// Server core: connections, framing and decoding, the command table lookup, replies on the
// request's wire (with PMI-2 `thrid` echoed), connection failures and status. The handlers
// live in handlers_pmi1.cpp / handlers_pmi2.cpp, fences in server_fence.cpp.
#include "pmi/server.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "pmi/mapping.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

constexpr std::string_view kThridKey = "thrid";
constexpr std::string_view kProcessMappingKey = "PMI_process_mapping";
constexpr std::string_view kErrorRc = "1";

std::string_view wire_name(Wire wire) { return wire == Wire::pmi1 ? "PMI-1" : "PMI-2"; }

std::string_view without_newline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

}  // namespace

std::string_view rank_state_name(RankState state) {
  switch (state) {
    case RankState::waiting:
      return "waiting";
    case RankState::initialized:
      return "initialized";
    case RankState::in_fence:
      return "in_fence";
    case RankState::finalized:
      return "finalized";
    case RankState::gone:
      return "gone";
  }
  return "unknown";
}

Server::Server(LaunchInfo info, ServerHooks& hooks)
    : info_(std::move(info)), hooks_(hooks), kvs_(info_.limits) {
  // An empty mapping kills MPICH's MPI_Init (trap T2); when every rank is here, it is known.
  if (info_.process_mapping.empty() && info_.world_size > 0 &&
      info_.local_ranks.size() == static_cast<size_t>(info_.world_size))
    info_.process_mapping = process_mapping(std::vector<int>(info_.local_ranks.size(), 0));
  slots_.reserve(info_.local_ranks.size());
  for (size_t i = 0; i < info_.local_ranks.size(); ++i) {
    int rank = info_.local_ranks[i];
    if (slot_index_.count(rank)) continue;
    slot_index_.emplace(rank, slots_.size());
    slots_.emplace_back(rank, i < info_.appnums.size() ? info_.appnums[i] : 0);
  }
}

ConnId Server::connect(std::optional<int> rank) {
  ConnId id = next_conn_++;
  auto it = conns_.emplace(id, Conn(id, info_.limits.max_frame)).first;
  it->second.rank = rank;
  return id;
}

ConnId Server::connect_port() {
  ConnId id = connect(std::nullopt);
  conns_.at(id).by_port_id = true;
  return id;
}

Result<int> Server::redeem_port_id(const std::string& id) {
  auto it = info_.port_ids.find(id);
  if (it == info_.port_ids.end())
    return make_error(cat("PMI_ID ", quoted(id), " is not one this launch issued, or was used"));
  int rank = it->second;
  info_.port_ids.erase(it);
  return rank;
}

void Server::receive(ConnId id, std::string_view bytes) {
  try {
    Conn* conn = find_conn(id);
    if (!conn || conn->dead || conn->closed) return;
    conn->framer.feed(bytes);
    receive_frames(*conn);
  } catch (const std::exception& e) {
    internal_error(id, e.what());
  } catch (...) {
    internal_error(id, "unknown exception");
  }
}

void Server::receive_frames(Conn& conn) {
  // Hooks may report this connection (client_failed) or close it: check before each message.
  while (!conn.dead && !conn.closed) {
    auto next = conn.framer.next();
    if (!next) return fail_conn(conn, next.error().message);
    if (!*next) return;
    const Frame& frame = **next;
    if (hooks_.tracing())
      hooks_.trace(conn.id, 'C', printable(without_newline(frame.header + frame.body)));
    auto request = decode(frame);
    if (!request) return fail_conn(conn, request.error().message);
    dispatch(conn, *request);
  }
}

void Server::eof(ConnId id) {
  try {
    Conn* conn = find_conn(id);
    if (!conn || conn->closed) return;
    conn->closed = true;
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                  [id](const Waiter& w) { return w.conn == id; }),
                   waiters_.end());
    size_t partial = conn->framer.pending_bytes();
    conn->framer = Framer(info_.limits.max_frame);
    if (conn->dead || conn->phase != Conn::Phase::initialized || conn->aborted) return;
    Slot* slot = slot_of(*conn);
    std::string message = "closed its PMI connection without finalize";
    if (slot && slot->state == RankState::in_fence)
      message += cat(" while in fence ", slot->fences_entered);
    if (partial > 0) message += cat(" (", partial, " bytes of an unfinished request)");
    fail_conn(*conn, message);
  } catch (const std::exception& e) {
    internal_error(id, e.what());
  } catch (...) {
    internal_error(id, "unknown exception");
  }
}

const Server::CommandSpec* Server::find_spec(const Command& request) {
  for (const CommandSpec& spec : command_table())
    if (spec.wire == request.wire && spec.name == request.name) return &spec;
  return nullptr;
}

void Server::dispatch(Conn& conn, const Command& request) {
  bool rank_known = conn.rank.has_value();
  if (rank_known) touch(conn, request);
  const CommandSpec* spec = find_spec(request);
  if (!spec) {
    reply(conn, request,
          error_response(request, cat("unknown ", wire_name(request.wire), " command '",
                                      printable(request.name), "'")));
  } else if (spec->needs_init && conn.phase < Conn::Phase::initialized) {
    std::string_view init = request.wire == Wire::pmi1 ? "init" : "fullinit";
    reply(conn, request,
          error_response(request, cat(who(conn), " sent '", request.name, "' before ", init)));
  } else if (conn.phase == Conn::Phase::finalized && spec->handler != &Server::on_abort) {
    reply(conn, request,
          error_response(request, cat(who(conn), " sent '", request.name, "' after finalize")));
  } else {
    (this->*spec->handler)(conn, request);
  }
  if (!rank_known && conn.rank) touch(conn, request);  // learned from initack / fullinit
}

void Server::touch(const Conn& conn, const Command& request) {
  Slot* slot = slot_of(conn);
  if (!slot) return;
  slot->last_command = request.name;
  slot->last_activity_ms = hooks_.now_ms();
}

void Server::reply(Conn& conn, const Command& request, Response response) {
  if (conn.dead || conn.closed) return;
  if (request.wire == Wire::pmi2) {
    if (const std::string* thrid = request.find(kThridKey))
      response.fields.insert(response.fields.begin(), {std::string(kThridKey), *thrid});
  }
  std::string bytes = encode(request.wire, response);
  if (hooks_.tracing()) hooks_.trace(conn.id, 'S', printable(without_newline(bytes)));
  hooks_.send(conn.id, std::move(bytes));
}

std::string Server::response_name(const Command& request) {
  if (request.wire == Wire::pmi2) return request.name + "-response";
  const CommandSpec* spec = find_spec(request);
  if (spec && !spec->pmi1_response.empty()) return std::string(spec->pmi1_response);
  return pmi1_token(request.name) + "_result";
}

Response Server::error_response(const Command& request, std::string_view message) const {
  Response response{response_name(request), {{"rc", std::string(kErrorRc)}}};
  if (request.wire == Wire::pmi1)
    response.fields.emplace_back("msg", pmi1_token(message));
  else
    response.fields.emplace_back("errmsg", std::string(message));
  return response;
}

void Server::fail_conn(Conn& conn, const std::string& message) {
  if (conn.dead) return;
  conn.dead = true;
  ConnId id = conn.id;
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                [id](const Waiter& w) { return w.conn == id; }),
                 waiters_.end());
  Slot* slot = slot_of(conn);
  // Only the connection that owns the rank (or any, before the rank is initialized) loses it.
  if (slot && slot->state != RankState::finalized &&
      (conn.phase >= Conn::Phase::initialized || slot->state == RankState::waiting))
    slot->state = RankState::gone;
  hooks_.client_failed(id, conn.rank.value_or(-1), message);
}

void Server::internal_error(ConnId id, std::string_view what) noexcept {
  try {
    Conn* conn = find_conn(id);
    LAT_LOG(error, "pmi", "internal error on PMI connection ", id, ": ", what,
            log_fields({{"launch", info_.jobid},
                        {"rank", conn && conn->rank ? cat(*conn->rank) : std::string("-")}}));
    if (conn) fail_conn(*conn, cat("internal error: ", what));
  } catch (...) {
    // Nothing may escape into the caller's event loop.
  }
}

Server::Conn* Server::find_conn(ConnId id) {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : &it->second;
}

Server::Slot* Server::find_slot(int rank) {
  auto it = slot_index_.find(rank);
  return it == slot_index_.end() ? nullptr : &slots_[it->second];
}

Server::Slot* Server::slot_of(const Conn& conn) {
  return conn.rank ? find_slot(*conn.rank) : nullptr;
}

int Server::appnum_of(const Conn& conn) {
  const Slot* slot = slot_of(conn);
  return slot ? slot->appnum : 0;
}

std::string Server::who(const Conn& conn) const {
  return conn.rank ? cat("rank ", *conn.rank) : cat("PMI connection ", conn.id);
}

Status Server::init_rank(Conn& conn, std::optional<int> claimed) {
  if (claimed && conn.rank && *claimed != *conn.rank)
    return make_error(cat("the connection of rank ", *conn.rank, " claims rank ", *claimed));
  std::optional<int> rank = claimed ? claimed : conn.rank;
  if (!rank)
    return make_error("rank unknown: give it with PMI_FD's connection, PMI_ID or pmirank=");
  Slot* slot = find_slot(*rank);
  if (!slot) return make_error(cat("rank ", *rank, " is not one of this node's ranks"));
  if (slot->state != RankState::waiting)
    return make_error(
        cat("rank ", *rank, " initialized twice (it is ", rank_state_name(slot->state), ")"));
  conn.rank = rank;
  conn.phase = Conn::Phase::initialized;
  slot->state = RankState::initialized;
  hooks_.rank_initialized(*rank);
  return {};
}

std::optional<std::string_view> Server::lookup(std::string_view key) const {
  if (key == kProcessMappingKey && !info_.process_mapping.empty()) return info_.process_mapping;
  return kvs_.get(key);
}

Status Server::check_kvsname(const Command& request) const {
  const std::string* kvsname = request.find("kvsname");
  if (!kvsname) return make_error("no kvsname given");
  if (*kvsname != info_.jobid)
    return make_error(
        cat("unknown kvsname ", quoted(*kvsname), " (this launch's is ", quoted(info_.jobid), ")"));
  return {};
}

std::vector<RankStatus> Server::status() const {
  std::vector<RankStatus> out;
  out.reserve(slots_.size());
  for (const Slot& s : slots_)
    out.push_back(
        RankStatus{s.rank, s.state, s.last_command, s.last_activity_ms, s.fences_entered});
  return out;
}

}  // namespace lattice::pmi
