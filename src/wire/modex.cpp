#include "wire/modex.hpp"

#include <algorithm>
#include <cstdint>

#include "rpc/bytes.hpp"

namespace lattice::wire {

ModexMessage decode_modex(schema::PmixModex::Reader m) {
  ModexMessage out;
  out.launch_id = m.getLaunchId();
  out.rank = static_cast<int>(std::min<uint32_t>(m.getRank(), INT32_MAX));
  out.tag = m.getTag();
  out.is_answer = m.getIsAnswer();
  out.data = rpc::as_string(m.getData());
  out.error = m.getError();
  return out;
}

rpc::Outgoing modex_message(const ModexMessage& message) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixModex();
  m.setLaunchId(message.launch_id);
  m.setRank(static_cast<uint32_t>(message.rank));
  m.setTag(message.tag);
  m.setIsAnswer(message.is_answer);
  m.setData(rpc::as_data(message.data));
  m.setError(message.error);
  return msg;
}

}  // namespace lattice::wire
