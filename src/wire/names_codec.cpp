#include "wire/names_codec.hpp"

#include "rpc/bytes.hpp"

namespace lattice::wire {

NameRequest decode_name(schema::PmiName::Reader m) {
  NameRequest out;
  out.launch_id = m.getLaunchId();
  switch (m.getOp()) {
    case schema::NameOp::PUBLISH:
      out.op = pmi::NameOp::publish;
      break;
    case schema::NameOp::UNPUBLISH:
      out.op = pmi::NameOp::unpublish;
      break;
    default:
      out.op = pmi::NameOp::lookup;
      break;  // lookups change nothing: the safe reading
  }
  out.name = m.getName();
  out.pmix = m.getPmix();
  out.port = out.pmix ? rpc::as_string(m.getValue()) : std::string(m.getPort());
  if (out.pmix) {
    out.nspace = m.getNspace();
    // Ranks above INT_MAX name nobody: the head finds no node for them.
    out.rank = m.getRank() > 0x7fffffffu ? -1 : static_cast<int>(m.getRank());
    out.scope = m.getScope();
    out.first_read = m.getFirstRead();
    out.wait_ms = m.getWaitMs();
  }
  return out;
}

rpc::Outgoing name_request(const NameRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmiName();
  m.setLaunchId(request.launch_id);
  m.setOp(request.op == pmi::NameOp::publish     ? schema::NameOp::PUBLISH
          : request.op == pmi::NameOp::unpublish ? schema::NameOp::UNPUBLISH
                                                 : schema::NameOp::LOOKUP);
  m.setName(request.name);
  if (!request.pmix) m.setPort(request.port);
  if (request.pmix) {
    m.setValue(rpc::as_data(request.port));
    m.setPmix(true);
    m.setNspace(request.nspace);
    m.setRank(static_cast<uint32_t>(request.rank));
    m.setScope(request.scope);
    m.setFirstRead(request.first_read);
    m.setWaitMs(request.wait_ms);
  }
  return msg;
}

rpc::Outgoing name_answer(const std::string& port, bool pmix) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmiName();
  if (pmix)
    m.setValue(rpc::as_data(port));
  else
    m.setPort(port);
  return msg;
}

Result<std::string> decode_name_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmiName()) return make_error("the head's answer to a name request is no PmiName");
  auto m = body.getPmiName();
  return m.hasValue() ? rpc::as_string(m.getValue()) : std::string(m.getPort());
}

}  // namespace lattice::wire
