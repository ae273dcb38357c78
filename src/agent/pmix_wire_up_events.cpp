// PMIx events and job control across a launch's nodes (docs/pmi-wire.md §7, events): a rank's event
// whose range goes beyond its node is sent to the nodes the range reaches, whose agents hand
// it to libpmix with its source; a rank's abnormal end is announced the same way
// (PMIX_ERR_PROC_ABORTED naming it) before the launch acts on it; PMIx_Job_control signals the
// named ranks on their own nodes.
#include <memory>

#include "agent/pmix_events.hpp"
#include "agent/pmix_wire_up.hpp"
#include "base/all_done.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

namespace {

// How long a rank's abnormal end waits for the other nodes to say their ranks have it.
constexpr uint64_t kEndHeardTimeoutMs = 5000;

}  // namespace

void PmixWireUp::deliver(const pmix::EventNotice& notice, std::function<void(Status)> done) {
  if (!server_) return done(make_error(cat("launch ", spec_.launch_id, " has ended here")));
  server_->notify(nspace(), launch_scoped(notice, nspace()),
                  [id = spec_.launch_id, code = notice.code, done = std::move(done)](Status s) {
                    if (!s)
                      LAT_LOG(warn, "pmix", id, ": event ", code,
                              " not delivered here: ", s.error().message,
                              log_fields({{"launch", id}}));
                    done(std::move(s));
                  });
}

void PmixWireUp::send_event(const std::vector<int>& nodes, const pmix::EventNotice& notice) {
  for (int node : nodes)
    peers_.send(spec_.peers[static_cast<size_t>(node)],
                pmix_event_message(PmixEventMessage{spec_.launch_id, notice}));
}

void PmixWireUp::event_raised(pmix::EventNotice notice) {
  auto nodes = event_nodes(notice, nspace(), spec_.rank_nodes, spec_.node_index);
  if (!nodes) {
    // libpmix has answered the rank already (it delivered the event here): the refusal can
    // only be said.
    LAT_LOG(warn, "pmix", spec_.launch_id, ": rank ", notice.source_rank, "'s event ", notice.code,
            " stays on this node: ", nodes.error().message,
            log_fields({{"launch", spec_.launch_id}, {"rank", cat(notice.source_rank)}}));
    if (notice.source_rank < static_cast<uint32_t>(spec_.world_size))
      events_.rank_notice(
          static_cast<int>(notice.source_rank),
          cat("lattice: PMIx_Notify_event reached only this node: ", nodes.error().message, "\n"));
    return;
  }
  LAT_LOG(debug, "pmix", spec_.launch_id, ": rank ", notice.source_rank, "'s event ", notice.code,
          " to ", nodes->size(), " other nodes");
  send_event(*nodes, notice);
}

void PmixWireUp::event_received(int from, const pmix::EventNotice& notice,
                                std::function<void(Status)> done) {
  // Only a node's own ranks raise its events.
  if (notice.source_rank >= static_cast<uint32_t>(spec_.world_size) ||
      spec_.rank_nodes[notice.source_rank] != from)
    return done(make_error(cat("an event from node ", from, " with source rank ",
                               notice.source_rank, ", which does not run there")));
  // Its range as the raising node judged it: nothing beyond the launch, and never LOCAL.
  if (notice.range == static_cast<uint8_t>(pmix::EventRange::local))
    return done(make_error(cat("an event of range local from node ", from)));
  if (auto nodes = event_nodes(notice, nspace(), spec_.rank_nodes, from); !nodes)
    return done(nodes.error());
  deliver(notice, std::move(done));
}

void PmixWireUp::rank_ended(int rank, proc::ExitStatus status, std::function<void()> heard) {
  if (status.code == 0 && status.signal == 0) return heard();
  const int code = status.signal ? 128 + status.signal : status.code;
  // A rank that never spoke PMIx (a script, an MPICH rank beside --pmi auto's PMIx) ends the
  // launch at once, as before there were events: its end is still told, without waiting.
  auto it = ranks_.find(rank);
  if (it == ranks_.end() || it->second.state == pmi::RankState::waiting) {
    announce_end(rank, code, [] {});
    return heard();
  }
  // Under -K0 the survivors go on: nothing waits for them to have reacted.
  if (spec_.kill_on_bad_exit)
    heard = [this, heard = std::move(heard)] { events_.after_notice(heard); };
  announce_end(rank, code, std::move(heard));
}

void PmixWireUp::announce_end(int rank, int exit_code, std::function<void()> heard) {
  if (!server_ || !announced_.insert(rank).second) return heard();
  pmix::EventNotice notice;
  notice.code = pmix::kProcAborted;
  notice.source_rank = static_cast<uint32_t>(rank);
  notice.range = static_cast<uint8_t>(pmix::EventRange::nspace);
  pmix::InfoValue affected;
  affected.key = pmix::kAffectedProc;
  affected.pmix_type = pmix::kTypeProc;
  affected.kind = pmix::InfoValue::Kind::procs;
  affected.procs.push_back(pmix::ProcId{nspace(), static_cast<uint32_t>(rank)});
  pmix::InfoValue code;
  code.key = pmix::kExitCode;
  code.pmix_type = pmix::kTypeInt;
  code.kind = pmix::InfoValue::Kind::integer;
  code.number = exit_code;
  notice.info = {affected, code};
  LAT_LOG(debug, "pmix", spec_.launch_id, ": rank ", rank, "'s abnormal end announced");
  // Every node answers once its libpmix has the event (a node that cannot is not waited for
  // beyond the timeout); then the launch acts on the end.
  auto one = all_done(static_cast<size_t>(spec_.nnodes()),
                      [alive = std::weak_ptr<int>(alive_), heard = std::move(heard)](Status) {
                        if (!alive.expired()) heard();
                      });
  for (int node = 0; node < spec_.nnodes(); ++node) {
    if (node == spec_.node_index) continue;
    peers_.call(spec_.peers[static_cast<size_t>(node)],
                pmix_event_message(PmixEventMessage{spec_.launch_id, notice}), kEndHeardTimeoutMs,
                [one, node, id = spec_.launch_id](auto reply) {
                  if (!reply)
                    LAT_LOG(debug, "pmix", id, ": node ", node,
                            " on a rank's end: ", reply.error().message);
                  one({});  // heard or not, the launch goes on
                });
  }
  deliver(notice, one);
}

void PmixWireUp::control_asked(pmix::ControlCall call) {
  if (!server_) return;
  ControlPlan plan = plan_control(call.targets, call.directives, nspace(), spec_.rank_nodes);
  if (plan.answer != pmix::Answer::success) {
    LAT_LOG(warn, "pmix", spec_.launch_id, ": rank ", call.requester,
            "'s PMIx_Job_control refused: ", plan.why,
            log_fields({{"launch", spec_.launch_id}, {"rank", cat(call.requester)}}));
    if (call.requester >= 0 && call.requester < spec_.world_size)
      events_.rank_notice(call.requester, cat("lattice: PMIx_Job_control: ", plan.why, "\n"));
    return server_->answer_control(call, plan.answer);
  }
  LAT_LOG(info, "pmix", spec_.launch_id, ": rank ", call.requester, "'s PMIx_Job_control: signal ",
          plan.signum, " to ranks on ", plan.ranks.size(), " nodes",
          log_fields({{"launch", spec_.launch_id}, {"rank", cat(call.requester)}}));
  // The answer waits for every node; a node that fails or does not answer fails the request.
  // (close() answers it with an error should the launch end first.)
  const uint64_t id = ++control_id_;
  controls_.emplace(id, call);
  auto one_done =
      all_done(plan.ranks.size(), [this, alive = std::weak_ptr<int>(alive_), id](Status s) {
        if (alive.expired()) return;
        auto it = controls_.find(id);
        if (it == controls_.end() || !server_) return;
        server_->answer_control(it->second, s ? pmix::Answer::success : pmix::Answer::error);
        controls_.erase(it);
      });
  std::vector<int> local;
  for (auto& [node, ranks] : plan.ranks) {
    if (node == spec_.node_index) {
      local = ranks;
      continue;
    }
    PmixControlMessage message{spec_.launch_id, PmixControlMessage::Action::signal, plan.signum,
                               ranks};
    message.action = plan.action;
    peers_.call(spec_.peers[static_cast<size_t>(node)], pmix_control_message(message),
                spec_.fence_timeout_ms,
                [one_done, to = node, id = spec_.launch_id,
                 peer = spec_.peers[static_cast<size_t>(node)].node_id](auto reply) {
                  if (!reply)
                    LAT_LOG(warn, "pmix", id, ": job control on node ", to, ": ",
                            reply.error().message, log_fields({{"launch", id}, {"peer", peer}}));
                  one_done(reply ? Status{} : Status(reply.error()));
                });
  }
  if (plan.ranks.count(spec_.node_index)) {
    events_.signal_ranks(local, plan.signum);
    one_done({});
  }
}

Status PmixWireUp::control_received(int from, PmixControlMessage message) {
  if (!server_) return make_error(cat("launch ", spec_.launch_id, " has ended here"));
  if (message.ranks.empty()) message.ranks = spec_.local_ranks();
  for (int rank : message.ranks)
    if (rank >= spec_.world_size || spec_.rank_nodes[static_cast<size_t>(rank)] != spec_.node_index)
      return make_error(cat("rank ", rank, " does not run on ",
                            spec_.peers[static_cast<size_t>(spec_.node_index)].node_id));
  int signum = control_signal(message.action, message.signum);
  LAT_LOG(info, "pmix", spec_.launch_id, ": job control from node ", from, ": signal ", signum,
          " to ", message.ranks.size(), " ranks", log_fields({{"launch", spec_.launch_id}}));
  events_.signal_ranks(message.ranks, signum);
  return {};
}

}  // namespace lattice::agent
