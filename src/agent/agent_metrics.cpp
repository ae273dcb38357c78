// The agent's metrics (lattice admin metrics, and metrics.listen's scrapes): the tally its
// launches and links count into, with the gauges read now. The format is admin/metrics.cpp's.
#include <algorithm>

#include "agent/agent.hpp"
#include "base/self_usage.hpp"
#include "lattice_version.h"
#include "secure/handshake.hpp"

namespace lattice::agent {

std::vector<std::string> Agent::refusal_causes() {
  std::vector<std::string> causes;
  for (auto r : {secure::Refusal::not_lattice, secure::Refusal::version, secure::Refusal::ciphers,
                 secure::Refusal::key, secure::Refusal::certificate, secure::Refusal::malformed})
    causes.emplace_back(secure::refusal_name(r));
  // link::Connection's own, then the connection slots' (accept and drop_handshake).
  for (const char* c : {"timeout", "closed", "source_full", "table_full", "dropped"})
    causes.emplace_back(c);
  return causes;
}

std::string Agent::metrics() {
  admin::MetricsGauges g;
  g.version = LATTICE_VERSION;
  g.node_id = config_.node_id;
  g.uptime_ms = loop_.now_ms() - started_ms_;
  g.draining = !draining_.empty();
  if (const secure::OwnIdentity* own = credentials_.own())
    g.certificate_expiry = own->certificate.not_after;
  for (const auto& [id, entry] : launches_) {
    if (!entry.launch->ended()) ++g.launches_running;
    g.ranks_running += entry.launch->ranks_running();
  }
  g.allocations = allocations_.size();
  g.open_links = connections_.size();
  g.peer_links = peers_.size();
  g.messages_sent = counts_.sent;
  g.messages_received = counts_.received;
  g.sealed_bytes_sent = sealed_.sent;
  g.sealed_bytes_received = sealed_.received;
  SelfUsage usage = self_usage();
  g.resident_bytes = usage.resident_bytes;
  g.open_fds = usage.open_fds;
  g.max_fds = usage.max_fds;
  return admin::render_metrics(metrics_, g);
}

}  // namespace lattice::agent
