#include "wire/modex.hpp"

#include <algorithm>
#include <cstdint>

#include "rpc/bytes.hpp"

namespace lattice::wire {

ModexRequest decode_modex(schema::PmixModex::Reader m) {
  return ModexRequest{m.getLaunchId(),
                      static_cast<int>(std::min<uint32_t>(m.getRank(), INT32_MAX))};
}

rpc::Outgoing modex_request(const ModexRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixModex();
  m.setLaunchId(request.launch_id);
  m.setRank(static_cast<uint32_t>(request.rank));
  return msg;
}

rpc::Outgoing modex_answer(const std::string& data) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmixModex().setData(rpc::as_data(data));
  return msg;
}

Result<std::string> decode_modex_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixModex()) return make_error("the answer to a direct modex is no PmixModex");
  return rpc::as_string(body.getPmixModex().getData());
}

}  // namespace lattice::wire
