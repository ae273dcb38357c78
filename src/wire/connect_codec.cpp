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
    case CollectiveKind::group_construct:
      return "PMIx_Group_construct";
    case CollectiveKind::group_destruct:
      return "PMIx_Group_destruct";
  }
  return "a PMIx collective";
}

rpc::Outgoing collective_request(const CollectiveRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixConnect();
  m.setLaunchId(request.launch_id);
  switch (request.kind) {
    case CollectiveKind::connect:
      m.setKind(schema::PmixCollectiveKind::CONNECT);
      break;
    case CollectiveKind::disconnect:
      m.setKind(schema::PmixCollectiveKind::DISCONNECT);
      break;
    case CollectiveKind::fence:
      m.setKind(schema::PmixCollectiveKind::FENCE);
      break;
    case CollectiveKind::group_construct:
      m.setKind(schema::PmixCollectiveKind::GROUP_CONSTRUCT);
      break;
    case CollectiveKind::group_destruct:
      m.setKind(schema::PmixCollectiveKind::GROUP_DESTRUCT);
      break;
  }
  m.setGroup(request.group);
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
    case schema::PmixCollectiveKind::GROUP_CONSTRUCT:
      out.kind = CollectiveKind::group_construct;
      break;
    case schema::PmixCollectiveKind::GROUP_DESTRUCT:
      out.kind = CollectiveKind::group_destruct;
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
  const bool group =
      out.kind == CollectiveKind::group_construct || out.kind == CollectiveKind::group_destruct;
  auto name = m.getGroup();
  if (group != (name.size() > 0) || name.size() > kMaxNspaceBytes)
    return make_error("a PMIx collective with a malformed group name");
  out.group = std::string(name.cStr(), name.size());
  return out;
}

rpc::Outgoing collective_answer(const CollectiveAnswer& answer) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixConnect();
  m.setData(rpc::as_data(answer.data));
  m.setContextId(answer.context_id);
  return msg;
}

Result<CollectiveAnswer> decode_collective_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixConnect())
    return make_error("the head's answer to a PMIx collective is no PmixConnect");
  return CollectiveAnswer{rpc::as_string(body.getPmixConnect().getData()),
                          body.getPmixConnect().getContextId()};
}

}  // namespace lattice::wire
