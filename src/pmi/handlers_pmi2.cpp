// PMI-2 command handlers (Slurm 22.05 libpmi2, MPICH pmi2/simple; response shapes of
// docs/pmi-wire.md §4). Every answer carries rc= (libpmi2 fails without it); booleans are
// TRUE/FALSE; `thrid=` is echoed by reply().
#include <limits>

#include "base/strings.hpp"
#include "pmi/server.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

constexpr std::string_view kTrue = "TRUE";
constexpr std::string_view kFalse = "FALSE";

Response found(std::string name, std::string_view value) {
  return Response{std::move(name),
                  {{"found", std::string(kTrue)}, {"value", std::string(value)}, {"rc", "0"}}};
}

Response not_found(std::string name) {
  return Response{std::move(name), {{"found", std::string(kFalse)}, {"rc", "0"}}};
}

}  // namespace

void Server::on_fullinit(Conn& conn, const Command& request) {
  // Slurm's client sends any subset of pmijobid / pmirank / srcid (PMI_ID) / threaded; with
  // neither rank field the rank is the connection's.
  if (conn.phase >= Conn::Phase::initialized)
    return reply(conn, request, error_response(request, cat(who(conn), " sent fullinit twice")));
  std::optional<int> claimed;
  if (conn.by_port_id && !conn.rank) {
    // Slurm's libpmi2 sends PMI_ID as srcid=; a bare pmirank= proves nothing on a port.
    const std::string* id = request.find("srcid");
    auto redeemed = redeem_port_id(id ? *id : std::string());
    if (!redeemed) return reply(conn, request, error_response(request, redeemed.error().message));
    claimed = *redeemed;
  }
  const std::string* given = claimed ? nullptr : request.find("pmirank");
  if (!given && !claimed) given = request.find("srcid");
  if (given) {
    auto rank = parse_int(*given);
    if (!rank || *rank < 0 || *rank > std::numeric_limits<int>::max())
      return reply(conn, request, error_response(request, cat("bad rank ", quoted(*given))));
    claimed = static_cast<int>(*rank);
  }
  if (auto st = init_rank(conn, claimed); !st)
    return reply(conn, request, error_response(request, st.error().message));
  // No spawner-jobid: its presence means "spawned" to the client.
  reply(conn, request,
        Response{"fullinit-response",
                 {{"pmi-version", "2"},
                  {"pmi-subversion", "0"},
                  {"rank", cat(*conn.rank)},
                  {"size", cat(info_.world_size)},
                  {"appnum", cat(appnum_of(conn))},
                  {"debugged", std::string(kFalse)},
                  {"pmiverbose", std::string(kFalse)},
                  {"rc", "0"}}});
}

void Server::on_job_getid(Conn& conn, const Command& request) {
  reply(conn, request, Response{"job-getid-response", {{"jobid", info_.jobid}, {"rc", "0"}}});
}

void Server::on_getjobattr(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  if (!key) return reply(conn, request, error_response(request, "info-getjobattr needs key="));
  std::string name = "info-getjobattr-response";
  // found=FALSE for PMI_process_mapping is fatal for MPICH: always served (trap T2).
  if (*key == "PMI_process_mapping")
    return reply(conn, request, found(name, info_.process_mapping));
  if (*key == "universeSize") return reply(conn, request, found(name, cat(info_.world_size)));
  reply(conn, request, not_found(name));
}

void Server::on_putnodeattr(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  const std::string* value = request.find("value");
  Status st = key && value ? kvs_.put_node_attr(*conn.rank, *key, *value)
                           : Status(make_error("info-putnodeattr needs key= and value="));
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  reply(conn, request, Response{"info-putnodeattr-response", {{"rc", "0"}}});
  // Wake the getnodeattr wait=TRUE requests parked on this key (taken out first: a reply's
  // hook must not see a half-updated list).
  std::vector<Waiter> woken;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->key == *key) {
      woken.push_back(std::move(*it));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  for (Waiter& w : woken)
    if (Conn* waiting = find_conn(w.conn))
      reply(*waiting, w.request, found("info-getnodeattr-response", *value));
}

void Server::on_getnodeattr(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  Status st =
      key ? check_key(*key, info_.limits) : Status(make_error("info-getnodeattr needs key="));
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  std::string name = "info-getnodeattr-response";
  if (const std::string* value = kvs_.node_attr(*key))
    return reply(conn, request, found(name, *value));
  const std::string* wait = request.find("wait");
  if (wait && *wait == kTrue) {
    // Seen for real: the get arrives before another local rank's put.
    waiters_.push_back(Waiter{conn.id, request, *key});
    return;
  }
  reply(conn, request, not_found(name));
}

void Server::on_kvs_put(Conn& conn, const Command& request) {
  const std::string* key = request.find("key");
  const std::string* value = request.find("value");
  Status st = key && value ? kvs_.put(*conn.rank, *key, *value)
                           : Status(make_error("kvs-put needs key= and value="));
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  reply(conn, request, Response{"kvs-put-response", {{"rc", "0"}}});
}

void Server::on_kvs_fence(Conn& conn, const Command& request) {
  enter_fence(conn, request, FenceKind::kvs_fence, nullptr);
}

void Server::on_kvs_get(Conn& conn, const Command& request) {
  // jobid= and srcid= (owner hint, -1 unknown) do not matter: one store per launch.
  const std::string* key = request.find("key");
  Status st = key ? check_key(*key, info_.limits) : Status(make_error("kvs-get needs key="));
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  std::string name = "kvs-get-response";
  auto value = lookup(*key);
  if (!value) return reply(conn, request, not_found(name));
  if (value->size() > info_.limits.max_value)  // from a node with larger limits
    return reply(conn, request,
                 error_response(
                     request, cat("the value of key ", quoted(*key), " exceeds the value limit")));
  reply(conn, request, found(name, *value));
}

void Server::on_ring(Conn& conn, const Command& request) {
  const std::string* count = request.find("ring-count");
  const std::string* left = request.find("ring-left");
  const std::string* right = request.find("ring-right");
  auto n = count ? parse_int(*count) : std::nullopt;
  if (!n || *n < 0 || *n > std::numeric_limits<int>::max() || !left || !right)
    return reply(conn, request,
                 error_response(request,
                                "ring needs ring-count=N (N >= 0), "
                                "ring-left= and ring-right="));
  RingValues input{*n, *left, *right};
  Status st = check_value("ring-left", input.left, info_.limits);
  if (st) st = check_value("ring-right", input.right, info_.limits);
  if (!st) return reply(conn, request, error_response(request, st.error().message));
  enter_fence(conn, request, FenceKind::ring, &input);
}

}  // namespace lattice::pmi
