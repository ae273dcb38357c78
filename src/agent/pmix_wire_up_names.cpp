// PmixWireUp's share of Open MPI's dynamic processes (pmi-wire.md §7): PMIx_Publish /
// Lookup / Unpublish through the launch's name service (one request per name), and
// PMIx_Connect / Disconnect / fences over some procs through the launch head's collectives.
#include <algorithm>

#include "agent/pmix_wire_up.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {
namespace {

pmi::NameOp op_of(pmix::NameCall::Op op) {
  switch (op) {
    case pmix::NameCall::Op::publish:
      return pmi::NameOp::publish;
    case pmix::NameCall::Op::unpublish:
      return pmi::NameOp::unpublish;
    case pmix::NameCall::Op::lookup:
      break;
  }
  return pmi::NameOp::lookup;
}

NameScope scope_of(pmix::NameCall::Scope scope) {
  switch (scope) {
    case pmix::NameCall::Scope::node:
      return NameScope::node;
    case pmix::NameCall::Scope::nspace:
      return NameScope::nspace;
    case pmix::NameCall::Scope::proc:
      return NameScope::proc;
    case pmix::NameCall::Scope::launch:
      break;
  }
  return NameScope::launch;
}

wire::CollectiveKind kind_of(pmix::CollectiveCall::Kind kind) {
  switch (kind) {
    case pmix::CollectiveCall::Kind::disconnect:
      return wire::CollectiveKind::disconnect;
    case pmix::CollectiveCall::Kind::fence:
      return wire::CollectiveKind::fence;
    case pmix::CollectiveCall::Kind::group_construct:
      return wire::CollectiveKind::group_construct;
    case pmix::CollectiveCall::Kind::group_destruct:
      return wire::CollectiveKind::group_destruct;
    case pmix::CollectiveCall::Kind::connect:
      break;
  }
  return wire::CollectiveKind::connect;
}

const char* call_name(pmix::NameCall::Op op) {
  switch (op) {
    case pmix::NameCall::Op::publish:
      return "PMIx_Publish";
    case pmix::NameCall::Op::unpublish:
      return "PMIx_Unpublish";
    case pmix::NameCall::Op::lookup:
      break;
  }
  return "PMIx_Lookup";
}

// PMIX_TIMEOUT is in seconds; the launch's fence timeout caps it (LaunchNames).
constexpr uint32_t kMaxWaitS = 4000000;

}  // namespace

void PmixWireUp::names_called(pmix::NameCall call) {
  if (!server_) return;
  if (call.rank < 0 || !ranks_.count(call.rank))
    return server_->answer_names(call, make_error("not a rank of this node"));
  saw(call.rank, pmi::RankState::initialized, call_name(call.op));  // the straggler report's
  if (!call.refused.empty()) {
    LAT_LOG(warn, "pmix", spec_.launch_id, ": rank ", call.rank, ": ", call.refused,
            log_fields({{"launch", spec_.launch_id}, {"rank", cat(call.rank)}}));
    events_.rank_notice(call.rank, cat("lattice: ", call.refused, "\n"));
    return server_->answer_names(call, make_error(call.refused));
  }
  uint64_t id = ++call_id_;
  std::vector<wire::NameRequest> requests;
  auto base = [&] {
    wire::NameRequest r;
    r.op = op_of(call.op);
    r.pmix = true;
    r.nspace = nspace();
    r.rank = call.rank;
    r.scope = static_cast<uint8_t>(scope_of(call.scope));
    r.first_read = call.first_read;
    if (call.op == pmix::NameCall::Op::lookup && call.wait)
      r.wait_ms = (call.timeout_s == 0 ? kMaxWaitS : std::min(call.timeout_s, kMaxWaitS)) * 1000;
    return r;
  };
  if (call.names.empty()) requests.push_back(base());  // unpublish: all of the rank's
  for (const auto& [key, value] : call.names) {
    auto r = base();
    r.name = key;
    r.port = value;
    requests.push_back(std::move(r));
  }
  LAT_LOG(debug, "pmix", spec_.launch_id, ": rank ", call.rank, ": ", requests.size(),
          " name request(s), op ", static_cast<int>(call.op),
          requests.front().wait_ms ? " (waits)" : "");
  names_pending_.emplace(id, NamesPending{std::move(call), requests.size(), {}, {}});
  for (size_t i = 0; i < requests.size(); ++i)
    names_.request(std::move(requests[i]), [this, alive = std::weak_ptr<int>(alive_), id,
                                            i](const Result<std::string>& value) {
      if (!alive.expired()) names_answered(id, i, value);
    });
}

void PmixWireUp::names_answered(uint64_t id, size_t index, const Result<std::string>& value) {
  auto it = names_pending_.find(id);
  if (it == names_pending_.end() || !server_) return;
  NamesPending& p = it->second;
  if (!value) {
    if (p.error.empty()) p.error = value.error().message;
  } else if (p.call.op == pmix::NameCall::Op::lookup) {
    p.found.emplace_back(p.call.names[index].first, value.value());
  }
  if (--p.left > 0) return;
  // A lookup answers with what it found (libpmix: not found only when nothing was); a publish
  // or an unpublish fails if any of its names did.
  bool failed = p.call.op == pmix::NameCall::Op::lookup ? p.found.empty() : !p.error.empty();
  if (failed) LAT_LOG(debug, "pmix", spec_.launch_id, ": rank ", p.call.rank, ": ", p.error);
  if (failed)
    server_->answer_names(p.call, make_error(p.error));
  else
    server_->answer_names(p.call, std::move(p.found));
  names_pending_.erase(it);
}

void PmixWireUp::collective_entered(pmix::CollectiveCall call) {
  if (!server_) return;
  wire::CollectiveRequest request;
  request.kind = kind_of(call.kind);
  for (const auto& proc : call.procs)
    request.procs.push_back({proc.nspace, proc.rank < 0 ? wire::kEveryRank : proc.rank});
  request.data = std::move(call.data);
  request.group = call.group;
  uint64_t id = ++call_id_;
  LAT_LOG(debug, "pmix", spec_.launch_id, ": ", wire::kind_name(request.kind), " over ",
          request.procs.size(), " proc(s) entered");
  // libpmix calls once all of the node's participants have: they all wait in it now.
  std::vector<int> here = local_participants(call.procs);
  for (int rank : here) saw(rank, pmi::RankState::initialized, wire::kind_name(request.kind));
  collectives_.emplace(id, std::move(call));
  connects_.enter(std::move(request), [this, alive = std::weak_ptr<int>(alive_), id,
                                       here](Result<wire::CollectiveAnswer> data) {
    if (alive.expired()) return;
    auto it = collectives_.find(id);
    if (it == collectives_.end() || !server_) return;
    if (!data) {
      LAT_LOG(warn, "pmix", spec_.launch_id, ": ", data.error().message,
              log_fields({{"launch", spec_.launch_id}}));
      for (int rank : here)  // on the rank's stderr, as a failed spawn is
        events_.rank_notice(rank, cat("lattice: ", data.error().message, "\n"));
    }
    if (data)
      server_->answer_collective(it->second, true, std::move(data->data), data->context_id);
    else
      server_->answer_collective(it->second, false, {}, 0);
    collectives_.erase(it);
  });
}

std::vector<int> PmixWireUp::local_participants(const std::vector<pmix::ProcRef>& procs) const {
  std::vector<int> out;
  for (const auto& [rank, status] : ranks_)
    for (const auto& proc : procs)
      if (proc.nspace == nspace() && (proc.rank < 0 || proc.rank == rank)) {
        out.push_back(rank);
        break;
      }
  return out;
}

void PmixWireUp::close_names() {
  for (auto& [id, p] : names_pending_)
    server_->answer_names(p.call, make_error(cat("launch ", spec_.launch_id, " has ended")));
  names_pending_.clear();
  for (auto& [id, call] : collectives_) server_->answer_collective(call, false, {}, 0);
  collectives_.clear();
}

}  // namespace lattice::agent
