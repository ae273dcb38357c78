#include "wire/names_codec.hpp"

namespace lattice::wire {

NameMessage decode_name(schema::PmiName::Reader m) {
  NameMessage out;
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
  out.port = m.getPort();
  out.tag = m.getTag();
  out.is_answer = m.getIsAnswer();
  out.error = m.getError();
  return out;
}

rpc::Outgoing name_message(const NameMessage& message) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmiName();
  m.setLaunchId(message.launch_id);
  m.setOp(message.op == pmi::NameOp::publish     ? schema::NameOp::PUBLISH
          : message.op == pmi::NameOp::unpublish ? schema::NameOp::UNPUBLISH
                                                 : schema::NameOp::LOOKUP);
  m.setName(message.name);
  m.setPort(message.port);
  m.setTag(message.tag);
  m.setIsAnswer(message.is_answer);
  m.setError(message.error);
  return msg;
}

}  // namespace lattice::wire
