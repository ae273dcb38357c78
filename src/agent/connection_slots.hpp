// Who may hold the agent's TCP connection slots (limits.max_connections). A connection holds a
// slot from accept until it closes. Until its handshake completes it is a handshake, counted
// against its source: at most limits.max_handshakes_per_source at once, so that one source
// cannot take the table. When every slot is taken, a new connection takes the place of the
// oldest handshake of the source that holds the most; only when every slot holds an
// authenticated link (a launcher or peer agent that proved the cluster key) is it refused. So
// handshakes, a flood's from however many sources, never keep out authenticated links, nor a new
// launch's links, whose handshakes complete in milliseconds where a flood's last seconds.
// Pure bookkeeping: the agent accepts, closes and logs.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "net/loopback_owner.hpp"

namespace lattice::agent {

// What connections are counted per. A client on another host is its address: an IPv6 address
// whole (/128), since a cluster's nodes commonly share one /64 and per-/64 counting would make
// them one source. A client on this host is its local user, whatever its address: any local user
// may bind any of 127/8. Root and the agent's own user could read the cluster key, so their
// handshakes are not capped per source (local mode's agents, which all run as the launcher's
// user, connect to each other at once).
struct Source {
  std::string name;    // "192.0.2.7", "2001:db8::7", "local uid 1001"
  bool capped = true;  // by limits.max_handshakes_per_source
};
Source source_of(const net::PeerOrigin& origin, uid_t agent_uid);

class ConnectionSlots {
 public:
  ConnectionSlots(size_t max_connections, size_t max_handshakes_per_source);
  // New limits (SIGHUP) apply to the connections that come next: none is closed for them.
  void set_limits(size_t max_connections, size_t max_handshakes_per_source);

  enum class Verdict {
    admitted,
    source_full,  // its source already has max_handshakes_per_source handshakes
    table_full,   // every slot holds an authenticated link
  };
  struct Admission {
    Verdict verdict = Verdict::admitted;
    // Admitted in place of this handshake (0: none), which the caller closes; it is no longer
    // counted.
    uint64_t dropped = 0;
  };
  // A new connection `id` (ids grow: a smaller one is older) from `source`.
  Admission admit(uint64_t id, const Source& source);
  // Its handshake completed: no longer counted against its source, never dropped for room.
  void authenticated(uint64_t id);
  // It closed, for whatever reason; ids no longer counted are ignored.
  void closed(uint64_t id);

  size_t open() const { return connections_.size(); }
  size_t handshakes() const { return connections_.size() - authenticated_; }
  size_t handshakes_from(const std::string& source) const;

 private:
  struct Slot {
    std::string source;
    bool authenticated = false;
  };
  // The oldest handshake of the source with the most (the oldest of those on a tie).
  uint64_t handshake_to_drop() const;
  void forget_handshake(uint64_t id, const std::string& source);

  size_t max_connections_;
  size_t max_per_source_;
  std::map<uint64_t, Slot> connections_;
  std::map<std::string, std::set<uint64_t>> handshakes_;  // by source, oldest first
  size_t authenticated_ = 0;
};

}  // namespace lattice::agent
