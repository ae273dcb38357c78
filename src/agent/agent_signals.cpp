// The agent's signals: SIGTERM/SIGINT end every launch and then the agent; SIGHUP reopens the
// log and re-reads the configuration, ending nothing.
#include "agent/agent.hpp"
#include "agent/revocations.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

void Agent::shutdown(int signum) {
  if (shutting_down_) {
    LAT_LOG(warn, "agent", "second signal: killing every rank now");
    for (auto& [id, entry] : launches_) entry.launch->shutdown(signum, true);
    return;
  }
  shutting_down_ = true;
  LAT_LOG(info, "agent", "signal ", signum, ": ending ", launches_.size(), " launches");
  service_.stopping(cat("signal ", signum, ": ending ", launches_.size(), " launches"));
  listener_.reset();
  for (auto& [id, entry] : launches_) {
    entry.launch->shutdown(signum, false);
    // A stopping agent does not wait for a slow reader: the rest of the output is queued (up
    // to the link's own limit) so the launch can end.
    entry.route->resume_output();
  }
  // Nothing of an allocation outlives the agent that contains it.
  for (auto& [id, alloc] : allocations_)
    alloc->end(cat("the agent on ", config_.node_id, " got signal ", signum));
  reaper_.start(0, 0, [this] { reap(); });
}

void Agent::reload() {
  if (!config_.log_file.empty()) {
    if (auto reopened = redirect_stderr_to(config_.log_file); !reopened)
      LAT_LOG(error, "agent", "SIGHUP: ", reopened.error().message, "; logging where it was");
  }
  const std::string source = config_source_.empty() ? "the defaults" : config_source_;
  if (!reread_) {
    LAT_LOG(info, "agent", "SIGHUP: log reopened");
    return;
  }
  auto fresh = reread_();
  if (!fresh) {
    LAT_LOG(error, "agent", "SIGHUP: ", fresh.error().message, "; the configuration is unchanged");
    return;
  }
  auto next = config::reload(config_, *fresh);
  for (const auto& key : next.restart_only)
    LAT_LOG(warn, "agent", "SIGHUP: ", key, " changed in ", source,
            ": it takes effect when the agent restarts");
  if (next.config.log_file != config_.log_file && !next.config.log_file.empty()) {
    if (auto moved = redirect_stderr_to(next.config.log_file); !moved) {
      LAT_LOG(error, "agent", "SIGHUP: ", moved.error().message, "; logging where it was");
      next.config.log_file = config_.log_file;
    }
  }
  config_ = std::move(next.config);
  set_log_level(config_.log_level);
  reload_revocations();
  slots_.set_limits(config_.max_connections, config_.max_handshakes_per_source);
  LAT_LOG(info, "agent", "SIGHUP: log reopened, ", source, " re-read (log level ",
          log_level_name(config_.log_level), ", limits.max_connections ", config_.max_connections,
          ", limits.max_handshakes_per_source ", config_.max_handshakes_per_source,
          ", jobs.propagate_limits ", proc::describe_propagated(config_.propagate_limits), ")");
}

void Agent::reload_revocations() {
  auto revoked = load_revocations(config_);
  if (!revoked) {
    LAT_LOG(error, "agent", "SIGHUP: ", revoked.error().message,
            "; the revoked keys are unchanged");
    return;
  }
  credentials_.set_revoked(std::move(*revoked));
  // Links established before: a revoked peer keeps none.
  std::vector<uint64_t> gone;
  for (const auto& [id, conn] : connections_) {
    auto key = conn->certified_key();
    if (key && credentials_.revoked().count(*key)) gone.push_back(id);
  }
  const std::string why = "its certificate is revoked (security.revoked)";
  for (uint64_t id : gone) {
    const secure::Identity peer = connections_.at(id)->identity();
    LAT_LOG(warn, "auth", "closing the link of ", secure::describe(peer), ": ", why);
    // Its part of any launch is no longer trusted: those launches end, naming it, before the
    // close, which the peer reports as its link ended by this node.
    if (peer.role == secure::Role::agent) node_lost(peer.name, why);
    drop(id, why);
  }
  if (!config_.revoked.empty())
    LAT_LOG(info, "agent", "SIGHUP: ", credentials_.revoked().size(), " revoked keys in ",
            config_.revoked, gone.empty() ? "" : cat("; closed ", gone.size(), " links"));
}

}  // namespace lattice::agent
