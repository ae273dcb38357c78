// --pmi auto: each app's ranks get the wire-up their program's MPI needs (wire_up_choice.hpp),
// through the two backends, PmiWireUp and PmixWireUp, which this one holds and drives together.
// A program that cannot be classified (a script, python3 with mpi4py) gets both at once: PMI_FD
// and libpmix's variables; whichever its library speaks serves it. libpmix is loaded only when
// some app here may need it. Only one of the two may carry this node's ranks: a rank that wires
// up with the other fails the launch, with both named, rather than leaving a fence to time out.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/launch_names.hpp"
#include "agent/launch_spec.hpp"
#include "agent/node_links.hpp"
#include "agent/pmi_wire_up.hpp"
#include "agent/pmix_wire_up.hpp"
#include "agent/wire_up.hpp"
#include "agent/wire_up_choice.hpp"
#include "base/clock.hpp"
#include "net/loop.hpp"

namespace lattice::agent {

class PmixHost;

class AutoWireUp final : public WireUp {
 public:
  // Everything given must outlive it; `pmix` null: this agent serves no PMIx.
  AutoWireUp(net::Loop& loop, const LaunchSpec& spec, const Clock& clock, LaunchNames& names,
             LaunchConnects& connects, PmixHost* pmix, NodeLinks& peers, WireUpEvents& events);
  ~AutoWireUp() override;

  // Reads each app's program and chooses; an MPMD mix of PMIx and PMI programs is refused.
  Status programs_resolved(const std::vector<std::string>& programs) override;
  Status open(LaunchDir& dir) override;
  void prepare(std::function<void(Status)> ready) override;
  Status rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) override;
  void rank_started(int rank, net::Process& process) override;
  void fence_complete(uint64_t epoch, KvStore merged) override;
  void fence_failed(uint64_t epoch, const std::string& message) override;
  std::optional<FenceWait> fence_waiting() const override;
  std::vector<pmi::RankStatus> status() const override;
  bool finalize_missing(int rank) const override;
  bool all_finalized() const override { return finalized_.size() == local_count_; }
  uint64_t fence_epoch() const override;
  std::vector<int> ranks_not_in_fence() const override;
  void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) override;
  // PMIx's events and job control, when this node serves PMIx.
  void rank_ended(int rank, proc::ExitStatus status, std::function<void()> heard) override {
    if (!pmix_) return heard();
    pmix_->rank_ended(rank, status, std::move(heard));
  }
  void event_received(int from, const pmix::EventNotice& notice,
                      std::function<void(Status)> done) override {
    if (!pmix_) return WireUp::event_received(from, notice, std::move(done));
    pmix_->event_received(from, notice, std::move(done));
  }
  Status control_received(int from, PmixControlMessage message) override {
    return pmix_ ? pmix_->control_received(from, std::move(message))
                 : WireUp::control_received(from, std::move(message));
  }
  void child_spawned(const std::string& child_id, const std::vector<int>& layout, bool here,
                     std::function<void(Status)> done) override {
    if (!pmix_) return WireUp::child_spawned(child_id, layout, here, std::move(done));
    pmix_->child_spawned(child_id, layout, here, std::move(done));
  }
  void close() override;

 private:
  enum class Side { pmi, pmix };
  // What one backend's ranks did, marked with the backend.
  class SideEvents final : public WireUpEvents {
   public:
    SideEvents(AutoWireUp& owner, Side side) : owner_(owner), side_(side) {}
    void rank_initialized(int rank) override { owner_.initialized(side_, rank); }
    void rank_finalized(int rank) override { owner_.finalized(rank); }
    void fence_entered(uint64_t epoch, pmi::KvList contribution) override {
      owner_.events_.fence_entered(epoch, std::move(contribution));
    }
    void rank_aborted(int rank, std::optional<int> code, std::string message) override {
      owner_.events_.rank_aborted(rank, code, std::move(message));
    }
    void rank_failed(int rank, std::string message, bool lost) override {
      owner_.events_.rank_failed(rank, std::move(message), lost);
    }
    void fence_unusable(uint64_t epoch, std::string message) override {
      owner_.events_.fence_unusable(epoch, std::move(message));
    }
    void rank_notice(int rank, std::string line) override {
      owner_.events_.rank_notice(rank, std::move(line));
    }
    void spawn_requested(wire::SpawnRequest request,
                         std::function<void(Result<std::string>)> answer) override {
      owner_.events_.spawn_requested(std::move(request), std::move(answer));
    }
    void signal_ranks(const std::vector<int>& ranks, int signum) override {
      owner_.events_.signal_ranks(ranks, signum);
    }
    void after_notice(std::function<void()> then) override {
      owner_.events_.after_notice(std::move(then));
    }

   private:
    AutoWireUp& owner_;
    Side side_;
  };

  void initialized(Side side, int rank);
  void finalized(int rank);
  // The backend this node's ranks wire up through: the one the first rank chose, else PMI's.
  WireUp& fencing() const;
  std::string library_path(const App& app) const;

  net::Loop& loop_;
  const LaunchSpec& spec_;
  const Clock& clock_;
  LaunchNames& names_;
  LaunchConnects& connects_;
  PmixHost* pmix_host_;
  NodeLinks& peers_;
  WireUpEvents& events_;
  SideEvents pmi_events_{*this, Side::pmi};
  SideEvents pmix_events_{*this, Side::pmix};
  WireUpChoice choice_;
  std::unique_ptr<PmiWireUp> pmi_;
  std::unique_ptr<PmixWireUp> pmix_;
  std::map<int, Side> wired_;  // local ranks that initialized, and through which backend
  std::set<int> finalized_;
  const size_t local_count_;
};

}  // namespace lattice::agent
