#include "wire/allocation.hpp"

#include <cctype>

#include "base/strings.hpp"
#include "wire/texts.hpp"

namespace lattice::wire {
namespace {

constexpr size_t kMaxAllocationIdLength = 128;

Result<std::vector<PeerInfo>> bounded_peers(capnp::List<schema::PeerInfo>::Reader in) {
  if (in.size() == 0) return make_error("an allocation of no nodes");
  if (in.size() > kMaxAllocationNodes)
    return make_error(
        cat("an allocation of ", in.size(), " nodes (at most ", kMaxAllocationNodes, ")"));
  return peers_of(in);
}

}  // namespace

bool valid_allocation_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxAllocationIdLength || id[0] == '.') return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

rpc::Outgoing allocation_start(const AllocationSpec& spec) {
  rpc::Outgoing msg;
  auto out = msg.envelope().initBody().initAllocationStart();
  out.setAllocationId(spec.id);
  set_job_user(out.initUser(), spec.user);
  set_peers(out.initNodes(static_cast<unsigned>(spec.nodes.size())), spec.nodes);
  out.setNodeIndex(spec.node_index);
  out.setTimeLimitMs(spec.time_limit_ms);
  out.setCpus(spec.cpus);
  out.setMemoryBytes(spec.memory_bytes);
  set_texts(out.initGpus(static_cast<unsigned>(spec.gpus.size())), spec.gpus);
  if (spec.cxi) out.initCxiCredentials();
  if (set_cxi(out.getCxiCredentials(), spec.cxi)) msg.mark_secret();
  out.setSlurmCompat(spec.slurm_compat);
  return msg;
}

Result<AllocationSpec> decode_allocation_start(schema::AllocationStart::Reader in) {
  AllocationSpec spec;
  spec.id = in.getAllocationId();
  if (!valid_allocation_id(spec.id))
    return make_error(cat("'", printable(spec.id), "' is not an allocation id"));
  if (!in.hasUser()) return make_error("the allocation names no user");
  spec.user = job_user_of(in.getUser());
  auto nodes = bounded_peers(in.getNodes());
  if (!nodes) return nodes.error();
  spec.nodes = std::move(nodes.value());
  spec.node_index = in.getNodeIndex();
  if (spec.node_index >= spec.nodes.size())
    return make_error(cat("node index ", spec.node_index, " of ", spec.nodes.size(), " nodes"));
  spec.time_limit_ms = in.getTimeLimitMs();
  spec.cpus = in.getCpus();
  spec.memory_bytes = in.getMemoryBytes();
  if (in.getGpus().size() > kMaxAllocationGpus)
    return make_error(
        cat(in.getGpus().size(), " GPUs on one node (at most ", kMaxAllocationGpus, ")"));
  spec.gpus = texts_of(in.getGpus());
  auto cxi = cxi_of(in.getCxiCredentials());
  if (!cxi) return cxi.error();
  spec.cxi = std::move(cxi.value());
  spec.slurm_compat = in.getSlurmCompat();
  return spec;
}

rpc::Outgoing allocation_end(const AllocationEnd& end) {
  rpc::Outgoing msg;
  auto out = msg.envelope().initBody().initAllocationEnd();
  out.setAllocationId(end.id);
  out.setReason(end.reason);
  return msg;
}

AllocationEnd decode_allocation_end(schema::AllocationEnd::Reader in) {
  return AllocationEnd{in.getAllocationId(), in.getReason()};
}

rpc::Outgoing allocation_ended(const AllocationEnded& ended) {
  rpc::Outgoing msg;
  auto out = msg.envelope().initBody().initAllocationEnded();
  out.setAllocationId(ended.id);
  out.setNodeIndex(ended.node_index);
  out.setReason(ended.reason);
  out.setTimeLimit(ended.time_limit);
  out.setKilled(ended.killed);
  return msg;
}

AllocationEnded decode_allocation_ended(schema::AllocationEnded::Reader in) {
  return AllocationEnded{in.getAllocationId(), in.getNodeIndex(), in.getReason(), in.getTimeLimit(),
                         in.getKilled()};
}

rpc::Outgoing allocation_info_request(const std::string& id) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initAllocationInfo().setAllocationId(id);
  return msg;
}

rpc::Outgoing allocation_info(const AllocationInfo& info) {
  rpc::Outgoing msg;
  auto out = msg.envelope().initBody().initAllocationInfo();
  out.setAllocationId(info.id);
  set_job_user(out.initUser(), info.user);
  set_peers(out.initNodes(static_cast<unsigned>(info.nodes.size())), info.nodes);
  out.setNodeIndex(info.node_index);
  out.setRemainingMs(info.remaining_ms);
  out.setSlurmCompat(info.slurm_compat);
  out.setHasCxi(info.has_cxi);
  return msg;
}

Result<AllocationInfo> decode_allocation_info(schema::AllocationInfo::Reader in) {
  AllocationInfo info;
  info.id = in.getAllocationId();
  if (!in.hasUser()) return make_error("the allocation names no user");
  info.user = job_user_of(in.getUser());
  auto nodes = bounded_peers(in.getNodes());
  if (!nodes) return nodes.error();
  info.nodes = std::move(nodes.value());
  info.node_index = in.getNodeIndex();
  if (info.node_index >= info.nodes.size())
    return make_error(cat("node index ", info.node_index, " of ", info.nodes.size(), " nodes"));
  info.remaining_ms = in.getRemainingMs();
  info.slurm_compat = in.getSlurmCompat();
  info.has_cxi = in.getHasCxi();
  return info;
}

}  // namespace lattice::wire
