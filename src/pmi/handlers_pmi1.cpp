// PMI-1 command handlers (MPICH 4.0.2 simple PMI; response shapes of docs/pmi-wire.md §3),
// plus the handlers both wires share: finalize, abort and unsupported commands.
// PMI-1 values cannot hold spaces: free text goes out through pmi1_token().
#include <cstdint>

#include "base/strings.hpp"
#include "pmi/server.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

Response init_answer(std::string_view version, std::string_view subversion, std::string_view rc) {
  return Response{"response_to_init",
                  {{"pmi_version", std::string(version)},
                   {"pmi_subversion", std::string(subversion)},
                   {"rc", std::string(rc)}}};
}

Response init_refusal(std::string_view message) {
  Response r = init_answer("1", "1", "1");
  r.fields.emplace_back("msg", pmi1_token(message));
  return r;
}

}  // namespace

void Server::on_init(Conn& conn, const Command& request) {
  if (conn.phase >= Conn::Phase::greeted)
    return reply(conn, request, init_refusal(cat(who(conn), " sent init twice")));
  conn.phase = Conn::Phase::greeted;
  const std::string* version = request.find("pmi_version");
  if (version && *version == "2") {
    // The PMI-2 opening (docs/pmi-wire.md §2): later messages are PMI-2 frames; the rank is
    // initialized by fullinit.
    return reply(conn, request, init_answer("2", "0", "0"));
  }
  if (!version || *version != "1")
    return reply(conn, request,
                 init_refusal(cat("unsupported PMI version ", version ? *version : "(none)")));
  if (auto st = init_rank(conn, std::nullopt); !st)
    return reply(conn, request, init_refusal(st.error().message));
  reply(conn, request, init_answer("1", "1", "0"));
}

void Server::on_initack(Conn& conn, const Command& request) {
  // PMI_PORT mode: the client names itself with PMI_ID and expects four lines. It checks no
  // rc here, so a refusal can only be a client failure.
  const std::string* id = request.find("pmiid");
  if (conn.phase != Conn::Phase::fresh) return fail_conn(conn, "initack after the PMI handshake");
  std::optional<int64_t> rank;
  if (conn.by_port_id) {
    auto redeemed = redeem_port_id(id ? *id : std::string());
    if (!redeemed) return fail_conn(conn, redeemed.error().message);
    rank = *redeemed;
  } else if (id) {
    rank = parse_int(*id);
  }
  if (!rank || *rank < 0 || !find_slot(static_cast<int>(*rank)))
    return fail_conn(conn, cat("initack names ", id ? quoted(*id) : std::string("no pmiid"),
                               ", not one of this node's ranks"));
  if (conn.rank && *conn.rank != *rank)
    return fail_conn(conn, cat("initack pmiid=", *rank, " on the connection of rank ", *conn.rank));
  conn.phase = Conn::Phase::identified;
  conn.rank = static_cast<int>(*rank);
  reply(conn, request, Response{"initack", {}});
  reply(conn, request, Response{"set", {{"size", cat(info_.world_size)}}});
  reply(conn, request, Response{"set", {{"rank", cat(*conn.rank)}}});
  reply(conn, request, Response{"set", {{"debug", "0"}}});
}

void Server::on_get_maxes(Conn& conn, const Command& request) {
  const Limits& l = info_.limits;
  reply(conn, request,
        Response{"maxes",
                 {{"kvsname_max", cat(l.max_kvsname)},
                  {"keylen_max", cat(l.max_key)},
                  {"vallen_max", cat(l.max_value)}}});
}

void Server::on_get_appnum(Conn& conn, const Command& request) {
  reply(conn, request, Response{"appnum", {{"appnum", cat(appnum_of(conn))}}});
}

void Server::on_get_my_kvsname(Conn& conn, const Command& request) {
  const std::string& name = info_.jobid;
  if (name.empty() || name.size() > info_.limits.max_kvsname || !is_pmi1_token(name))
    return reply(conn, request,
                 error_response(request, cat("the launch id ", quoted(name),
                                             " cannot serve as a PMI-1 kvsname (1..",
                                             info_.limits.max_kvsname, " bytes, no spaces)")));
  reply(conn, request, Response{"my_kvsname", {{"kvsname", name}}});
}

void Server::on_get_universe_size(Conn& conn, const Command& request) {
  reply(conn, request, Response{"universe_size", {{"size", cat(info_.world_size)}}});
}

void Server::on_put(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  const std::string* value = request.find("value");
  Status st = check_kvsname(request);
  if (st && (!key || !value)) st = make_error("put needs key= and value=");
  if (st) st = kvs_.put(*conn.rank, *key, *value);
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  reply(conn, request, Response{"put_result", {{"rc", "0"}, {"msg", "success"}}});
}

void Server::on_get(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  Status st = check_kvsname(request);
  if (st && !key) st = make_error("get needs key=");
  if (st) st = check_key(*key, info_.limits);
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  auto value = lookup(*key);
  if (!value)  // exactly what MPICH 4.0.2 expects for a miss
    return reply(
        conn, request,
        Response{"get_result",
                 {{"rc", "-1"}, {"msg", cat("key_", *key, "_not_found")}, {"value", "unknown"}}});
  Response hit{"get_result", {{"rc", "0"}, {"msg", "success"}, {"value", std::string(*value)}}};
  if (!is_pmi1_token(*value) || encode(Wire::pmi1, hit).size() > kPmi1ClientLineMax)
    return reply(conn, request,
                 error_response(request, cat("the value of key ", quoted(*key), " (", value->size(),
                                             " bytes) cannot be sent on a PMI-1 line")));
  reply(conn, request, std::move(hit));
}

void Server::on_barrier_in(Conn& conn, const Command& request) {
  enter_fence(conn, request, FenceKind::barrier, nullptr);
}

void Server::on_finalize(Conn& conn, const Command& request) {
  Slot* slot = slot_of(conn);
  conn.phase = Conn::Phase::finalized;
  if (slot) slot->state = RankState::finalized;
  if (request.wire == Wire::pmi1)
    reply(conn, request, Response{"finalize_ack", {}});
  else
    reply(conn, request, Response{"finalize-response", {{"rc", "0"}}});
  if (slot) hooks_.rank_finalized(slot->rank);
}

void Server::on_abort(Conn& conn, const Command& request) {
  // No answer: the job is killed. PMI-1 carries `exitcode=`; PMI-2 (`isworld=`, `msg=`) none.
  conn.aborted = true;
  std::optional<int> exit_code;
  if (request.wire == Wire::pmi1) {
    if (const std::string* code = request.find("exitcode")) {
      auto parsed = parse_int(*code);
      if (parsed && *parsed >= INT32_MIN && *parsed <= INT32_MAX)
        exit_code = static_cast<int>(*parsed);
    }
  }
  const std::string* message = request.find("msg");
  if (!message) message = request.find("message");
  hooks_.abort_requested(conn.rank.value_or(-1), exit_code, message ? *message : std::string());
}

void Server::on_spawn_pmi1(Conn& conn, const Command& request) {
  // MPICH writes one mcmd block per command of a spawn_multiple and reads one answer after
  // the last (spawnssofar == totspawns): answering each block would desynchronise it.
  const std::string* total = request.find("totspawns");
  const std::string* so_far = request.find("spawnssofar");
  auto t = total ? parse_int(*total) : std::nullopt;
  auto s = so_far ? parse_int(*so_far) : std::nullopt;
  if (t && s && *s < *t) return;
  on_unsupported(conn, request);
}

void Server::on_unsupported(Conn& conn, const Command& request) {
  reply(conn, request,
        error_response(request, cat("'", request.name, "' is not supported by this launcher")));
}

}  // namespace lattice::pmi
