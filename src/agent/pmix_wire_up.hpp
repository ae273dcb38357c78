// PMIx wire-up (Open MPI): the launch's namespace registered with the agent's libpmix server
// before any rank starts, libpmix's client events turned into the events PMI-1/2 ranks raise,
// and fences carried by the launch's fence like theirs. A node's contribution is libpmix's
// opaque blob for its ranks, sent as one hex value under this node's key; the answer is every
// node's blob concatenated, in any order (which is all libpmix asks of its host).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "agent/launch_connects.hpp"
#include "agent/launch_names.hpp"
#include "agent/launch_spec.hpp"
#include "agent/node_links.hpp"
#include "agent/pmix_blobs.hpp"
#include "agent/pmix_child_namespace.hpp"
#include "agent/pmix_procs.hpp"
#include "agent/wire_up.hpp"
#include "base/clock.hpp"
#include "pmix/server.hpp"

namespace lattice::agent {

class PmixHost;

class PmixWireUp final : public WireUp, private pmix::NamespaceEvents {
 public:
  // `spec`, `clock`, `peers` and `events` must outlive it; `host` null: this agent serves no
  // PMIx (open() says so).
  PmixWireUp(const LaunchSpec& spec, const Clock& clock, PmixHost* host, NodeLinks& peers,
             LaunchNames& names, LaunchConnects& connects, WireUpEvents& events);
  ~PmixWireUp() override { close(); }

  Status open(LaunchDir& dir) override;
  void prepare(std::function<void(Status)> ready) override;
  Status rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) override;
  void rank_started(int, net::Process&) override {}
  void fence_complete(uint64_t epoch, KvStore merged) override;
  void fence_failed(uint64_t epoch, const std::string& message) override;
  std::optional<FenceWait> fence_waiting() const override;
  std::vector<pmi::RankStatus> status() const override;
  bool finalize_missing(int rank) const override;
  bool all_finalized() const override;
  uint64_t fence_epoch() const override { return epoch_; }
  std::vector<int> ranks_not_in_fence() const override { return {}; }  // libpmix's to know
  void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) override;
  // Events and job control across the launch's nodes (pmix_wire_up_events.cpp).
  void rank_ended(int rank, proc::ExitStatus status, std::function<void()> heard) override;
  void event_received(int from, const pmix::EventNotice& notice,
                      std::function<void(Status)> done) override;
  Status control_received(int from, PmixControlMessage message) override;
  void child_spawned(const std::string& child_id, const std::vector<int>& layout, bool here,
                     std::function<void(Status)> done) override;
  void close() override;

 private:
  // pmix::NamespaceEvents
  void client_connected(int rank) override;
  void client_finalized(pmix::RankCall call) override;
  void client_aborted(pmix::RankCall call, int status, std::string message) override;
  void fence_entered(pmix::FenceCall call) override;
  void modex_requested(pmix::RankCall call) override;
  void spawn_requested(pmix::SpawnCall call) override;
  // pmix_wire_up_names.cpp: through the launch's name service and its head's collectives.
  void names_called(pmix::NameCall call) override;
  void collective_entered(pmix::CollectiveCall call) override;
  void names_answered(uint64_t id, size_t index, const Result<std::string>& value);
  void close_names();
  // This node's ranks among `procs` (a rank of -1: all of its namespace).
  std::vector<int> local_participants(const std::vector<pmix::ProcRef>& procs) const;
  void event_raised(pmix::EventNotice notice) override;
  void control_asked(pmix::ControlCall call) override;
  // PMIX_ERR_PROC_ABORTED for `rank` to this node's ranks and to every other node, once;
  // `heard` once every node's libpmix has it (or a node failed to answer in time).
  void announce_end(int rank, int exit_code, std::function<void()> heard);
  void deliver(const pmix::EventNotice& notice, std::function<void(Status)> done);
  void send_event(const std::vector<int>& nodes, const pmix::EventNotice& notice);
  // `call`'s rank of launch `launch_id` (this one, or one it spawned) runs on node `node`.
  void fetch_modex(pmix::RankCall call, const std::string& launch_id, int node);
  void modex_answered(uint64_t id, Result<std::string> data);
  void register_namespace(std::function<void(Status)> ready);
  void saw(int rank, pmi::RankState state, const char* call);
  std::string nspace() const { return launch_nspace(spec_); }

  const LaunchSpec& spec_;
  const Clock& clock_;
  PmixHost* host_;
  NodeLinks& peers_;
  LaunchNames& names_;
  LaunchConnects& connects_;
  WireUpEvents& events_;
  pmix::Server* server_ = nullptr;  // once open() found it; null again once closed
  std::string tmpdir_;              // the launch's directory
  PmixBlobs blobs_;                 // what this node's fences carried
  // Each local rank as libpmix showed it (its last call, for stragglers and the admin socket).
  std::map<int, pmi::RankStatus> ranks_;
  // This node's fences in flight by epoch: the call to answer, and when it was entered.
  std::map<uint64_t, std::pair<pmix::FenceCall, uint64_t>> fences_;
  uint64_t epoch_ = 0;
  std::map<uint64_t, pmix::RankCall> modex_;  // direct modex asked of other nodes
  uint64_t modex_id_ = 0;
  std::map<uint64_t, pmix::SpawnCall> spawns_;  // PMIx_Spawn calls waiting for the launcher
  uint64_t spawn_id_ = 0;
  // PMIx name calls and collectives waiting on the launch's head, answered as failed on close.
  struct NamesPending {
    pmix::NameCall call;
    size_t left = 0;                                         // names not yet answered
    std::vector<std::pair<std::string, std::string>> found;  // lookup
    std::string error;                                       // the first failure
  };
  std::map<uint64_t, NamesPending> names_pending_;
  std::map<uint64_t, pmix::CollectiveCall> collectives_;
  uint64_t call_id_ = 0;
  // Namespaces the launch spawned with no rank here, known to libpmix for the launch's ranks.
  std::map<std::string, std::unique_ptr<ChildNamespace>> children_;
  std::set<int> announced_;  // local ranks whose abnormal end has been announced
  std::map<uint64_t, pmix::ControlCall> controls_;  // job controls waiting for other nodes
  uint64_t control_id_ = 0;
  // Answers to calls of other nodes (and libpmix's registration) may come after this is gone.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lattice::agent
