// The agent's side of the admin socket: one request line in, the rendered answer out, then the
// connection is closed. The protocol and rendering live in admin/; this only moves bytes and
// collects the live state.
#include <unistd.h>

#include <algorithm>

#include "admin/protocol.hpp"
#include "agent/agent.hpp"
#include "base/log.hpp"
#include "lattice_version.h"
#include "net/peer_credentials.hpp"

namespace lattice::agent {

void Agent::accept_admin(std::unique_ptr<net::Stream> stream) {
  // The socket file is 0600 already; the peer check holds even if someone loosens it.
  auto cred = net::peer_credentials(*stream);
  if (!cred || (cred->uid != 0 && cred->uid != ::geteuid())) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "admin client", "refused an admin client ",
                    cred ? cat("(uid ", cred->uid, ")") : std::string("(no peer credentials)"),
                    ": only root and the agent's own user may ask");
    return;
  }
  uint64_t id = next_conn_id_++;
  net::Stream* s = stream.get();
  admin_clients_[id] = std::move(stream);
  auto request = std::make_shared<admin::RequestBuffer>();
  s->start(
      [this, s, request](std::string_view bytes) {
        if (auto line = request->add(bytes)) s->end(admin::handle_request(*line, *this));
      },
      [this, id](const Error&) {
        // Destroyed outside its own callback; one reaper serves every client and launch, so
        // what it must reap is state, not a capture a later start() would replace.
        closed_admin_.push_back(id);
        reaper_.start(0, 0, [this] { reap(); });
      });
}

admin::AgentStatus Agent::status() {
  admin::AgentStatus st;
  st.version = LATTICE_VERSION;
  st.node_id = config_.node_id;
  st.draining = draining_;
  if (listener_) {
    auto bound = listener_->bound();
    st.listen = cat(bound.host, ':', bound.port);
  }
  st.uptime_ms = loop_.now_ms() - started_ms_;
  st.messages_sent = counts_.sent;
  st.messages_received = counts_.received;
  st.peer_links = peers_.size();
  st.peer_links_held = peers_.held_count();
  st.open_links = connections_.size();
  for (auto& [id, entry] : launches_) {
    const Launch& launch = *entry.launch;
    admin::LaunchRow row;
    row.launch_id = id;
    row.node_index = launch.spec().node_index;
    row.nnodes = launch.spec().nnodes();
    row.world_size = launch.spec().world_size;
    row.fence_epoch = launch.wire_up().fence_epoch();
    row.fence_waiting_for = launch.wire_up().ranks_not_in_fence();
    row.children_pending = launch.fence_children_pending();
    row.age_ms = launch.age_ms();
    if (!launch.fence_phases().fences().empty()) {
      const FencePhases& f = launch.fence_phases().fences().back();
      row.last_fence.push_back(
          admin::FenceRow{f.epoch, f.entered_us, f.reduced_us, f.store_us, f.released_us});
    }
    auto pids = launch.rank_pids();
    uint64_t now = environment_.clock->now_ms();
    for (const auto& rank : launch.wire_up().status()) {
      admin::RankRow r;
      r.rank = rank.rank;
      for (auto [rk, pid] : pids)
        if (rk == rank.rank) r.pid = pid;
      r.pmi_state = std::string(pmi::rank_state_name(rank.state));
      r.last_command = rank.last_command;
      r.idle_ms = rank.last_activity_ms ? now - rank.last_activity_ms : 0;
      r.fence_epoch = rank.fences_entered;
      row.ranks.push_back(std::move(r));
    }
    st.launches.push_back(std::move(row));
  }
  for (const auto& [id, alloc] : allocations_) {
    admin::AllocationRow row;
    row.id = id;
    row.user = alloc->spec().user.name;
    row.uid = alloc->spec().user.uid;
    row.node_index = static_cast<int>(alloc->spec().node_index);
    row.nnodes = static_cast<int>(alloc->spec().nodes.size());
    row.remaining_ms = alloc->remaining_ms();
    row.ending = alloc->ending();
    row.launches =
        static_cast<size_t>(std::count_if(launches_.begin(), launches_.end(), [&](const auto& e) {
          return e.second.launch->spec().allocation_id == row.id;
        }));
    row.limits = alloc->group() ? alloc->group()->limits_note() : "not contained";
    st.allocations.push_back(std::move(row));
  }
  return st;
}

void Agent::status_request(const Sender& sender, uint64_t request_id,
                           schema::AgentStatus::Reader request) {
  rpc::Session& session = *session_of(sender.conn);
  if (auto allowed = may_see_status(sender); !allowed) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "status", allowed.error().message);
    return session.respond_error(request_id, allowed.error().message);
  }
  std::string only(request.getLaunchId().cStr(), request.getLaunchId().size());
  rpc::Outgoing answer;
  auto reply = answer.body().initAgentStatus();
  reply.setJson(request.getJson());
  reply.setLaunchId(request.getLaunchId());
  reply.setText(request.getJson() ? admin::render_status_json(status(), only)
                                  : admin::render_status(status(), only));
  session.respond(request_id, std::move(answer));
}

std::string Agent::end_allocation(const std::string& id) {
  Allocation* alloc = find_allocation(id);
  if (!alloc) return cat("no allocation '", id, "' on ", config_.node_id);
  alloc->end("ended by an operator (lattice admin end-allocation)");
  return "";
}

void Agent::drain(const std::string& reason) {
  if (reason.empty())
    LAT_LOG(info, "agent", "drain ended by an operator: new launches and allocations accepted");
  else
    LAT_LOG(info, "agent", "drained by an operator: ", reason,
            "; new launches and allocations refused, ", launches_.size(), " launches and ",
            allocations_.size(), " allocations go on");
  draining_ = reason;
}

std::string Agent::refused_by_drain() const {
  return draining_.empty() ? "" : cat("node ", config_.node_id, " is draining: ", draining_);
}

}  // namespace lattice::agent
