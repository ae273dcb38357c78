// A namespace a launch spawned (PMIx_Spawn) with no rank on this node, as the parent's nodes
// serve it: libpmix here knows it (no local procs, as PRRTE registers every job on every daemon)
// so that the parent's ranks may ask for its ranks' data, which the child's node holds (direct
// modex, PmixModex naming the child's launch), and enter collectives with it. Nothing else can
// come from a namespace with no client here: other calls are answered with an error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "pmix/server.hpp"

namespace lattice::agent {

class ChildNamespace final : public pmix::NamespaceEvents {
 public:
  // `parent` and `server` must outlive it; `layout`: each child's node, an index into the
  // parent's nodes. The parent's wire-up fetches a rank's data from its node (`fetch`) and
  // takes the collectives libpmix names this namespace for (`collective`).
  ChildNamespace(const LaunchSpec& parent, pmix::Server& server, std::string child_id,
                 std::vector<int> layout, std::function<void(pmix::RankCall, int node)> fetch,
                 std::function<void(pmix::CollectiveCall)> collective);
  // libpmix forgets the namespace.
  ~ChildNamespace() override;

  // libpmix's view of it here (PMIX_PARENT_ID is the child's own business).
  pmix::JobLayout job_layout(const std::string& tmpdir) const;

 private:
  void client_connected(int) override {}
  void client_finalized(pmix::RankCall call) override { server_.release(call); }
  void client_aborted(pmix::RankCall call, int, std::string) override { server_.release(call); }
  void fence_entered(pmix::FenceCall call) override { server_.answer_fence(call, false, {}); }
  void modex_requested(pmix::RankCall call) override;
  void spawn_requested(pmix::SpawnCall call) override;
  void event_raised(pmix::EventNotice) override {}
  void control_asked(pmix::ControlCall call) override;
  void names_called(pmix::NameCall call) override;
  void collective_entered(pmix::CollectiveCall call) override { collective_(std::move(call)); }

  const LaunchSpec& parent_;
  pmix::Server& server_;
  const std::string child_id_;
  const std::vector<int> layout_;
  std::function<void(pmix::RankCall, int node)> fetch_;
  std::function<void(pmix::CollectiveCall)> collective_;
};

}  // namespace lattice::agent
