#include "wire/connect_codec.hpp"

#include "base/strings.hpp"
#include "rpc/bytes.hpp"

namespace lattice::wire {
namespace {

constexpr uint32_t kWireWildcard = 0xfffffffe;  // PMIX_RANK_WILDCARD

}  // namespace

const char* kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::connect:
      return "PMIx_Connect";
    case CollectiveKind::disconnect:
      return "PMIx_Disconnect";
    case CollectiveKind::fence:
      return "PMIx_Fence over some procs";
  }
  return "a PMIx collective";
}

rpc::Outgoing collective_request(const CollectiveRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixConnect();
  m.setLaunchId(request.launch_id);
  m.setKind(request.kind == CollectiveKind::connect      ? schema::PmixCollectiveKind::CONNECT
            : request.kind == CollectiveKind::disconnect ? schema::PmixCollectiveKind::DISCONNECT
                                                         : schema::PmixCollectiveKind::FENCE);
  auto procs = m.initProcs(static_cast<unsigned>(request.procs.size()));
  for (unsigned i = 0; i < request.procs.size(); ++i) {
    procs[i].setNspace(request.procs[i].nspace);
    procs[i].setRank(request.procs[i].rank == kEveryRank
                         ? kWireWildcard
                         : static_cast<uint32_t>(request.procs[i].rank));
  }
  m.setData(rpc::as_data(request.data));
  return msg;
}

Result<CollectiveRequest> decode_collective(schema::PmixConnect::Reader m) {
  CollectiveRequest out;
  out.launch_id = m.getLaunchId();
  switch (m.getKind()) {
    case schema::PmixCollectiveKind::CONNECT:
      out.kind = CollectiveKind::connect;
      break;
    case schema::PmixCollectiveKind::DISCONNECT:
      out.kind = CollectiveKind::disconnect;
      break;
    case schema::PmixCollectiveKind::FENCE:
      out.kind = CollectiveKind::fence;
      break;
    default:
      return make_error("a PMIx collective of an unknown kind");
  }
  auto procs = m.getProcs();
  if (procs.size() == 0 || procs.size() > kMaxCollectiveProcs)
    return make_error(cat("a PMIx collective over ", procs.size(), " procs"));
  out.procs.reserve(procs.size());
  for (auto p : procs) {
    auto nspace = p.getNspace();
    if (nspace.size() == 0 || nspace.size() > kMaxNspaceBytes)
      return make_error("a PMIx collective names a malformed namespace");
    uint32_t rank = p.getRank();
    if (rank != kWireWildcard && rank > 0x7fffffffu)
      return make_error(cat("a PMIx collective names rank ", rank));
    out.procs.push_back({std::string(nspace.cStr(), nspace.size()),
                         rank == kWireWildcard ? kEveryRank : static_cast<int>(rank)});
  }
  out.data = rpc::as_string(m.getData());
  return out;
}

rpc::Outgoing collective_answer(const std::string& data) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmixConnect().setData(rpc::as_data(data));
  return msg;
}

Result<std::string> decode_collective_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixConnect())
    return make_error("the head's answer to a PMIx collective is no PmixConnect");
  return rpc::as_string(body.getPmixConnect().getData());
}

}  // namespace lattice::wire
