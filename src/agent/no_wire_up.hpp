// The wire-up of a launch whose processes speak no PMI: an allocation's batch step, a shell
// script that starts MPI launchers and `lattice launch` itself. It serves nothing and gives
// the process no PMI_* variables (a PMI client in the script must not mistake it for a rank).
#pragma once

#include "agent/wire_up.hpp"

namespace lattice::agent {

class NoWireUp final : public WireUp {
 public:
  Status open(LaunchDir&) override { return {}; }
  void prepare(std::function<void(Status)> ready) override { ready({}); }
  Status rank_environment(int, proc::RankEnvInput& in, net::SpawnSpec&) override {
    in.wireup = proc::RankEnvInput::Wireup::none;
    return {};
  }
  void rank_started(int, net::Process&) override {}
  void fence_complete(uint64_t, KvStore) override {}
  void fence_failed(uint64_t, const std::string&) override {}
  std::optional<FenceWait> fence_waiting() const override { return std::nullopt; }
  std::vector<pmi::RankStatus> status() const override { return {}; }
  bool finalize_missing(int) const override { return false; }
  bool all_finalized() const override { return false; }
  uint64_t fence_epoch() const override { return 0; }
  std::vector<int> ranks_not_in_fence() const override { return {}; }
  void modex_asked(int, int, std::function<void(Result<std::string>)> answer) override {
    answer(make_error("a batch step has no PMIx data"));
  }
  void close() override {}
};

}  // namespace lattice::agent
