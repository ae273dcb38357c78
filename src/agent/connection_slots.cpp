#include "agent/connection_slots.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

Source source_of(const net::PeerOrigin& origin, uid_t agent_uid) {
  if (!origin.local_uid) return Source{origin.address, true};
  uid_t uid = *origin.local_uid;
  return Source{cat("local uid ", uid), uid != 0 && uid != agent_uid};
}

ConnectionSlots::ConnectionSlots(size_t max_connections, size_t max_handshakes_per_source)
    : max_connections_(max_connections), max_per_source_(max_handshakes_per_source) {}

void ConnectionSlots::set_limits(size_t max_connections, size_t max_handshakes_per_source) {
  max_connections_ = max_connections;
  max_per_source_ = max_handshakes_per_source;
}

ConnectionSlots::Admission ConnectionSlots::admit(uint64_t id, const Source& source) {
  Admission out;
  if (source.capped && handshakes_from(source.name) >= max_per_source_) {
    out.verdict = Verdict::source_full;
    return out;
  }
  if (connections_.size() >= max_connections_) {
    if (handshakes() == 0) {
      out.verdict = Verdict::table_full;
      return out;
    }
    out.dropped = handshake_to_drop();
    closed(out.dropped);
  }
  connections_[id] = Slot{source.name, false};
  handshakes_[source.name].insert(id);
  return out;
}

void ConnectionSlots::authenticated(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end() || it->second.authenticated) return;
  it->second.authenticated = true;
  ++authenticated_;
  forget_handshake(id, it->second.source);
}

void ConnectionSlots::closed(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (it->second.authenticated)
    --authenticated_;
  else
    forget_handshake(id, it->second.source);
  connections_.erase(it);
}

size_t ConnectionSlots::handshakes_from(const std::string& source) const {
  auto it = handshakes_.find(source);
  return it == handshakes_.end() ? 0 : it->second.size();
}

uint64_t ConnectionSlots::handshake_to_drop() const {
  const std::set<uint64_t>* most = nullptr;
  for (const auto& [source, ids] : handshakes_)
    if (!most || ids.size() > most->size() ||
        (ids.size() == most->size() && *ids.begin() < *most->begin()))
      most = &ids;
  return most ? *most->begin() : 0;
}

void ConnectionSlots::forget_handshake(uint64_t id, const std::string& source) {
  auto it = handshakes_.find(source);
  if (it == handshakes_.end()) return;
  it->second.erase(id);
  if (it->second.empty()) handshakes_.erase(it);
}

}  // namespace lattice::agent
