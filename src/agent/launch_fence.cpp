#include "agent/launch_fence.hpp"

#include "base/log.hpp"

namespace lattice::agent {

LaunchFence::LaunchFence(net::Loop& loop, const LaunchSpec& spec, WireUp& wire_up,
                         ClockFn elapsed_us, TreeFence::SendFn send, FailedFn failed_above)
    : spec_(spec), wire_up_(wire_up), elapsed_us_(std::move(elapsed_us)) {
  auto complete = [this](uint64_t epoch, KvStore merged) {
    wire_up_.fence_complete(epoch, std::move(merged));
    released(epoch);
  };
  if (spec.nnodes() == 1) {
    fence_ = std::make_unique<LocalFence>(loop, complete);
    return;
  }
  auto tree = std::make_unique<TreeFence>(
      loop, spec.launch_id, spec.node_index, spec.fence_tree(), std::move(send), complete,
      [this, failed_above = std::move(failed_above)](uint64_t epoch, const std::string& message) {
        wire_up_.fence_failed(epoch, message);
        failed_above(epoch, message);
      },
      [this](uint64_t epoch, FencePhase p) { phase(epoch, p); });
  tree_ = tree.get();
  fence_ = std::move(tree);
}

void LaunchFence::released(uint64_t epoch) {
  phase(epoch, FencePhase::released);
  if (!on_released_) return;
  const auto& fences = log_.fences();
  for (auto it = fences.rbegin(); it != fences.rend(); ++it)
    if (it->epoch == epoch && it->entered_us && it->released_us >= it->entered_us)
      return on_released_(it->released_us - it->entered_us);
}

void LaunchFence::enter(uint64_t epoch, pmi::KvList contribution) {
  LAT_LOG(debug, "fence", spec_.launch_id, ": local ranks entered fence ", epoch, " with ",
          contribution.size(), " values");
  phase(epoch, FencePhase::entered);
  fence_->enter(epoch, std::move(contribution));
}

void LaunchFence::receive(wire::FenceMessage message) {
  if (!tree_) {
    LAT_LOG(warn, "fence", spec_.launch_id, ": fence message for a single-node launch dropped",
            log_fields({{"launch", spec_.launch_id}}));
    return;
  }
  tree_->receive(std::move(message));
}

std::optional<uint64_t> LaunchFence::overdue(uint64_t now_ms) const {
  auto wait = wire_up_.fence_waiting();
  if (!wait || now_ms - wait->since_ms < spec_.fence_timeout_ms) return std::nullopt;
  return wait->epoch;
}

void LaunchFence::fail(uint64_t epoch, const std::string& message) {
  wire_up_.fence_failed(epoch, message);
  if (tree_) tree_->fail_down(epoch, message);
}

std::vector<wire::Straggler> LaunchFence::stragglers(uint64_t epoch, uint64_t now_ms) const {
  std::vector<wire::Straggler> out;
  for (const auto& st : wire_up_.status())
    if (st.fences_entered < epoch)
      out.push_back(wire::Straggler{st.rank, std::string(pmi::rank_state_name(st.state)),
                                    st.last_command, now_ms - st.last_activity_ms});
  return out;
}

}  // namespace lattice::agent
