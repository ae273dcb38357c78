// The PMI side of a launch: connections from ranks into the launch's pmi::Server, the server's
// hooks (responses, fences, aborts, client failures), and the watchdog for fence deadlines and
// ranks that dropped PMI without finalize.
#include <uv.h>

#include <algorithm>
#include <csignal>

#include "agent/launch.hpp"
#include "agent/launch_rank.hpp"
#include "base/log.hpp"

namespace lattice::agent {

void Launch::serve_pmi(std::unique_ptr<net::Stream> stream, std::optional<int> rank) {
  pmi::ConnId id = pmi_.connect(rank);
  net::Stream* s = stream.get();
  conns_[id] = PmiConn{std::move(stream), rank.value_or(-1)};
  s->start([this, id](std::string_view bytes) { pmi_.receive(id, bytes); },
           [this, id](const std::string&) {
             // Mark the connection gone before telling the engine, so that a client_failed
             // raised from eof() is known to be about a lost connection, not bad bytes.
             auto it = conns_.find(id);
             if (it == conns_.end()) return;
             it->second.stream.reset();
             pmi_.eof(id);
           });
}

void Launch::send(pmi::ConnId conn, std::string bytes) {
  auto it = conns_.find(conn);
  if (it != conns_.end() && it->second.stream) it->second.stream->write(std::move(bytes));
}

void Launch::fence_ready(uint64_t epoch, pmi::KvList local_puts) {
  LAT_LOG(debug, "fence", spec_.launch_id, ": local ranks entered fence ", epoch, " with ",
          local_puts.size(), " puts");
  fence_->enter(epoch, std::move(local_puts));
}

void Launch::abort_requested(int rank, std::optional<int> exit_code, std::string message) {
  std::string reason = cat(where(rank), " called abort");
  if (exit_code) reason += cat(" with exit code ", *exit_code);
  if (!message.empty()) reason += cat(": ", message);
  // PMI-2 carries no code; Slurm's client exits 1 after sending abort, so report that.
  fail(Failure{reason, exit_code.value_or(1), rank});
}

void Launch::client_failed(pmi::ConnId conn, int rank, std::string message) {
  auto it = conns_.find(conn);
  bool lost = it != conns_.end() && !it->second.stream;
  if (it != conns_.end()) {
    if (rank < 0) rank = it->second.rank;
    conns_.erase(it);
  }
  Rank* r = find_rank(rank);
  if (lost && r && !r->exited) {
    // Usually the rank is exiting: wait for its status, which says more (watchdog below).
    r->pmi_lost_at_ms = now_ms();
    r->pmi_lost_reason = message;
    return;
  }
  if (lost) return;  // the exit has been judged already
  // The engine names the rank itself ("rank 2: ..."); say it once, with the node.
  std::string prefix = cat("rank ", rank, ": ");
  if (starts_with(message, prefix)) message.erase(0, prefix.size());
  fail(Failure{cat(rank >= 0 ? where(rank) : cat("a client on ", env_.node_id),
                   ": PMI protocol error: ", message),
               1, rank});
}

void Launch::rank_initialized(int rank) {
  if (Rank* r = find_rank(rank)) r->initialized = true;
  if (times_.first_init_us == 0) times_.first_init_us = elapsed_us();
}

void Launch::rank_finalized(int rank) {
  if (Rank* r = find_rank(rank)) r->finalized = true;
  if (++finalized_ == static_cast<int>(ranks_.size())) times_.last_finalize_us = elapsed_us();
}

void Launch::trace(pmi::ConnId conn, char direction, std::string_view message) {
  LAT_LOG(trace, "pmi", spec_.launch_id, " conn ", conn, ' ', direction, ": ", message);
}

void Launch::check_fence_deadline() {
  uint64_t now = now_ms();
  for (auto& rank : ranks_) {
    if (rank->pmi_lost_at_ms && !rank->exited && now - rank->pmi_lost_at_ms >= kLostPmiGraceMs) {
      fail(Failure{cat(where(rank->rank), ": ", rank->pmi_lost_reason), 1, rank->rank});
      rank->pmi_lost_at_ms = 0;
    }
  }
  if (failure_) return;
  // A fence is pending when some local rank is parked in it; it started when the first one
  // entered (a parked rank's last activity is its fence request).
  uint64_t started = 0;
  uint64_t epoch = 0;
  for (const auto& st : pmi_.status()) {
    if (st.state != pmi::RankState::in_fence) continue;
    if (started == 0 || st.last_activity_ms < started) started = st.last_activity_ms;
    epoch = std::max<uint64_t>(epoch, st.fences_entered);
  }
  if (started == 0 || now - started < spec_.fence_timeout_ms) return;
  std::string message = cat("fence ", epoch, " timed out after ", spec_.fence_timeout_ms / 1000.0,
                            " s");
  pmi_.fence_failed(epoch, message);
  if (tree_fence_) tree_fence_->fail_down(epoch, message);
  fail(Failure{message, 1, -1, epoch});
}

std::vector<std::string> Launch::stragglers(uint64_t epoch) const {
  std::vector<std::string> out;
  uint64_t now = uv_hrtime() / 1000000;
  for (const auto& st : pmi_.status()) {
    if (st.fences_entered >= epoch) continue;
    std::string last = st.last_command.empty()
                           ? std::string("no PMI command yet")
                           : cat("last PMI command '", st.last_command, "' ",
                                 (now - st.last_activity_ms) / 100 / 10.0, " s ago");
    out.push_back(cat("rank ", st.rank, " on ", env_.node_id, ": ",
                      pmi::rank_state_name(st.state), ", ", last));
  }
  return out;
}

}  // namespace lattice::agent
