#include "agent/allocation.hpp"

#include <csignal>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "proc/environment.hpp"

namespace lattice::agent {
namespace {

// How often an ending allocation's group is looked at until it is empty.
constexpr uint64_t kWatchPeriodMs = 100;

}  // namespace

Allocation::Allocation(net::Loop& loop, wire::AllocationSpec spec, std::vector<int> cpus,
                       uint64_t owner_conn, std::unique_ptr<proc::AllocationGroup> group,
                       Hooks hooks)
    : loop_(loop),
      spec_(std::move(spec)),
      cpus_(std::move(cpus)),
      owner_conn_(owner_conn),
      group_(std::move(group)),
      hooks_(std::move(hooks)),
      started_ms_(loop.now_ms()),
      limit_timer_(loop),
      kill_timer_(loop),
      watch_timer_(loop) {
  // Counted here, from this node's own clock: the limit holds whatever becomes of the others.
  if (spec_.time_limit_ms)
    limit_timer_.start(spec_.time_limit_ms, 0, [this] {
      end(cat("its time limit (", spec_.time_limit_ms / 1000.0, " s) was reached"), true);
    });
}

Allocation::~Allocation() {
  // The agent lets an allocation go only once drained, except when it is itself torn down.
  if (group_ && !drained_) group_->signal(SIGKILL);
}

uint64_t Allocation::remaining_ms() const {
  if (!spec_.time_limit_ms) return 0;
  uint64_t spent = loop_.now_ms() - started_ms_;
  return spent >= spec_.time_limit_ms ? 0 : spec_.time_limit_ms - spent;
}

std::string Allocation::nodelist() const {
  std::vector<std::string> ids;
  for (const auto& node : spec_.nodes) ids.push_back(node.node_id);
  return join(ids, ",");
}

wire::AllocationInfo Allocation::info() const {
  return wire::AllocationInfo{
      spec_.id,       spec_.user,         spec_.nodes,          spec_.node_index,
      remaining_ms(), spec_.slurm_compat, spec_.cxi.has_value()};
}

std::vector<std::pair<std::string, std::string>> Allocation::launch_env(
    const LaunchSpec& launch, const std::string& door) const {
  std::vector<std::pair<std::string, std::string>> env;
  const bool batch_step = launch.pmi == wire::PmiMode::none;
  const std::string nodes = nodelist();
  const std::string count = std::to_string(spec_.nodes.size());
  if (!door.empty()) env.emplace_back("LATTICE_USER_SOCKET", door);
  if (batch_step) {
    env.emplace_back("LATTICE_NODELIST", nodes);
    env.emplace_back("LATTICE_NNODES", count);
  }
  if (!spec_.slurm_compat && !launch.slurm_compat) return env;
  const std::string slurm_nodes = proc::slurm_nodelist(nodes);
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOBID"}) env.emplace_back(name, spec_.id);
  env.emplace_back("SLURM_JOB_NODELIST", slurm_nodes);
  env.emplace_back("SLURM_JOB_NUM_NODES", count);
  env.emplace_back("SLURM_JOB_USER", spec_.user.name);
  env.emplace_back("SLURM_JOB_UID", std::to_string(spec_.user.uid));
  if (batch_step) {
    env.emplace_back("SLURM_NODELIST", slurm_nodes);
    env.emplace_back("SLURM_NNODES", count);
  }
  return env;
}

void Allocation::end(std::string reason, bool time_limit) {
  if (ending_) return;
  ending_ = true;
  time_limit_ = time_limit;
  reason_ = std::move(reason);
  limit_timer_.stop();
  LAT_LOG(info, "alloc", spec_.id, ": ending: ", reason_,
          log_fields({{"alloc", spec_.id}, {"uid", cat(spec_.user.uid)}}));
  spec_.cxi.reset();  // nothing may start in it any more that could need the key
  if (hooks_.ending) hooks_.ending(*this);
  if (!group_) {
    drained_ = true;
    if (hooks_.drained) hooks_.drained(*this);
    return;
  }
  // What its launches left, and what its user started outside them (setsid'd strays): the
  // launches' own ends give their ranks the same grace.
  killed_ = static_cast<uint32_t>(group_->members().size());
  if (killed_ == 0) return watch_group();  // nothing left (its batch step ended it): at once
  group_->signal(SIGTERM);
  kill_timer_.start(kAllocationGraceMs, 0, [this] { group_->signal(SIGKILL); });
  watch_timer_.start(kWatchPeriodMs, kWatchPeriodMs, [this] { watch_group(); });
}

void Allocation::watch_group() {
  if (!group_->members().empty()) return;
  watch_timer_.stop();
  kill_timer_.stop();
  drained_ = true;
  if (hooks_.drained) hooks_.drained(*this);
}

}  // namespace lattice::agent
