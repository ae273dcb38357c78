// How a launch's ranks wire up on this node: PMI-1/PMI-2 over the agent's own server
// (pmi_wire_up.hpp) or PMIx through libpmix (pmix_wire_up.hpp). A launch holds one backend and
// never asks which: it opens the backend's doors, lets it prepare, asks it for each rank's
// environment, and carries fences between it and the other nodes (launch_fence.hpp). What the
// ranks do comes back as WireUpEvents, the same events whichever interface they speak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/pmix_messages.hpp"
#include "base/kv_store.hpp"
#include "base/result.hpp"
#include "net/process.hpp"
#include "pmi/server.hpp"
#include "pmix/server.hpp"
#include "proc/environment.hpp"
#include "proc/exit_status.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::agent {

class LaunchDir;

// What a rank may leave unread (PMI answers, stdin) before it is cut off: far beyond any honest
// backlog (one PMI request in flight, answers of at most a frame each).
constexpr size_t kRankWriteLimitBytes = size_t{16} << 20;

// What the ranks did, as the launch's policy hears it.
class WireUpEvents {
 public:
  virtual ~WireUpEvents() = default;
  virtual void rank_initialized(int rank) = 0;
  virtual void rank_finalized(int rank) = 0;
  // This node's ranks entered fence `epoch`; `contribution` is theirs for the merged store.
  virtual void fence_entered(uint64_t epoch, pmi::KvList contribution) = 0;
  virtual void rank_aborted(int rank, std::optional<int> exit_code, std::string message) = 0;
  // The rank's wire-up connection ended without finalize (`lost`), or it sent what cannot be
  // served.
  virtual void rank_failed(int rank, std::string message, bool lost) = 0;
  // A fence's merged store came back unusable here: the launch fails as if it failed above.
  virtual void fence_unusable(uint64_t epoch, std::string message) = 0;
  // A line for the rank's stderr, from the agent (what its library asked that is refused).
  virtual void rank_notice(int rank, std::string line) = 0;
  // A rank's PMIx_Spawn: `answer` gets the children's launch id, or why there is none; it may
  // run after the launch is gone (the caller guards it).
  virtual void spawn_requested(wire::SpawnRequest request,
                               std::function<void(Result<std::string>)> answer) = 0;
  // PMIx job control: `signum` to each of `ranks` (this node's) still running.
  virtual void signal_ranks(const std::vector<int>& ranks, int signum) = 0;
  // `then` after the time the ranks get to react to a rank's end before the launch kills them
  // (kEndNoticeMs), unless the launch ends first.
  virtual void after_notice(std::function<void()> then) = 0;
};

// The fence this node's ranks are parked in, and since when (ms, the launch clock's).
struct FenceWait {
  uint64_t epoch = 0;
  uint64_t since_ms = 0;
};

class WireUp {
 public:
  virtual ~WireUp() = default;
  // The program each app runs, as this node resolved it ("" where it could not: only apps
  // without ranks here), before open(): a backend that depends on them chooses now (auto).
  virtual Status programs_resolved(const std::vector<std::string>&) { return {}; }
  // What the ranks reach the launch through, made in its directory before the directory is
  // handed to the job's user. An error means the launch cannot start.
  virtual Status open(LaunchDir& dir) = 0;
  // What must be known before any rank starts; `ready` runs once, on this or a later turn.
  virtual void prepare(std::function<void(Status)> ready) = 0;
  // The wire-up part of `rank`'s environment (and how it is spawned), then the started process.
  virtual Status rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) = 0;
  virtual void rank_started(int rank, net::Process& process) = 0;
  // The merged store of fence `epoch`, or why the fence failed (its ranks are released with it).
  virtual void fence_complete(uint64_t epoch, KvStore merged) = 0;
  virtual void fence_failed(uint64_t epoch, const std::string& message) = 0;
  virtual std::optional<FenceWait> fence_waiting() const = 0;
  // Each local rank's wire-up state, in local-rank order (the admin socket, stragglers).
  virtual std::vector<pmi::RankStatus> status() const = 0;
  // `rank` wired up and has not finalized (an exit 0 then is a failure).
  virtual bool finalize_missing(int rank) const = 0;
  virtual bool all_finalized() const = 0;
  virtual uint64_t fence_epoch() const = 0;                 // the highest fence entered here
  virtual std::vector<int> ranks_not_in_fence() const = 0;  // a pending fence still waits for
  // Another node (`from`) asks for `rank`'s data, which lives here (direct modex).
  virtual void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) = 0;
  // A local rank ended while the launch was not failing: `heard` runs (now, or on a later
  // turn) once the ranks that listen, on every node, have been told of an abnormal end (PMIx
  // events), so that the launch acts on it only then.
  virtual void rank_ended(int, proc::ExitStatus, std::function<void()> heard) { heard(); }
  // Node `from` (as its link proved) passes on an event one of its ranks raised, or the end of
  // one of its ranks: `done` once this node's ranks have it (or why not). Or it asks this node
  // to signal its ranks (PMIx job control).
  virtual void event_received(int, const pmix::EventNotice&, std::function<void(Status)> done) {
    done(make_error("PMIx events reach only the ranks of a --pmi pmix launch"));
  }
  virtual Status control_received(int, PmixControlMessage) {
    return make_error("PMIx job control acts only on the ranks of a --pmi pmix launch");
  }
  // The launch spawned `child_id`, whose rank r runs on node layout[r] (PmixFamily): `done` once
  // this node can serve its ranks' data to the launch's ranks; `here`: part of it runs here
  // (and its own launch serves it).
  virtual void child_spawned(const std::string&, const std::vector<int>&, bool,
                             std::function<void(Status)> done) {
    done(make_error("only a --pmi pmix launch spawns"));
  }
  // The launch ended: whatever waits is answered with a failure, and the doors close.
  virtual void close() = 0;
};

}  // namespace lattice::agent
