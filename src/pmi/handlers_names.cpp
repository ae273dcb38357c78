// Name publishing on both wires: the request is checked here and parked on its connection; the
// launch serves it across its nodes (ServerHooks::name_request) and answers with name_answer.
// MPICH 4.0.2's PMI-1 client wants `info=ok` beside rc=0 (and `port=` for a lookup); PMI-2
// clients read `value=` from name-lookup-response.
#include "base/strings.hpp"
#include "pmi/server.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {
namespace {

NameOp op_of(const Command& request) {
  const std::string& n = request.name;
  if (n == "publish_name" || n == "name-publish") return NameOp::publish;
  if (n == "unpublish_name" || n == "name-unpublish") return NameOp::unpublish;
  return NameOp::lookup;
}

}  // namespace

void Server::on_name(Conn& conn, const Command& request) {
  NameOp op = op_of(request);
  const std::string* name = request.find(request.wire == Wire::pmi1 ? "service" : "name");
  const std::string* port = request.find("port");
  std::string why;
  if (!name || name->empty())
    why = "no service name given";
  else if (name->size() > kMaxServiceNameBytes)
    why = cat("a service name of ", name->size(), " bytes (at most ", kMaxServiceNameBytes, ")");
  else if (op == NameOp::publish && (!port || port->empty()))
    why = "no port given";
  else if (port && port->size() > info_.limits.max_value)
    why = cat("a port of ", port->size(), " bytes (at most ", info_.limits.max_value, ")");
  else if (conn.pending_name)
    why = "a name request is already pending on this connection";
  if (!why.empty()) return reply(conn, request, error_response(request, why));
  conn.pending_name = request;
  if (!hooks_.name_request(conn.id, op, *name, port ? *port : std::string())) {
    conn.pending_name.reset();
    on_unsupported(conn, request);
  }
}

void Server::name_answer(ConnId id, const Result<std::string>& answer) {
  Conn* conn = find_conn(id);
  if (!conn || !conn->pending_name) return;
  Command request = std::move(*conn->pending_name);
  conn->pending_name.reset();
  if (!answer) return reply(*conn, request, error_response(request, answer.error().message));
  Response response{response_name(request), {{"rc", "0"}}};
  bool lookup = op_of(request) == NameOp::lookup;
  if (request.wire == Wire::pmi1) {
    response.fields.emplace_back("info", "ok");
    if (lookup) response.fields.emplace_back("port", pmi1_token(answer.value()));
  } else if (lookup) {
    response.fields.emplace_back("value", answer.value());
  }
  reply(*conn, request, std::move(response));
}

}  // namespace lattice::pmi
