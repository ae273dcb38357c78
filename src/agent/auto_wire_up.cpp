#include "agent/auto_wire_up.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {
namespace {

const char* side_name(bool pmix) { return pmix ? "PMIx" : "PMI-1/PMI-2"; }

}  // namespace

AutoWireUp::AutoWireUp(net::Loop& loop, const LaunchSpec& spec, const Clock& clock,
                       LaunchNames& names, LaunchConnects& connects, PmixHost* pmix,
                       NodeLinks& peers, WireUpEvents& events)
    : loop_(loop),
      spec_(spec),
      clock_(clock),
      names_(names),
      connects_(connects),
      pmix_host_(pmix),
      peers_(peers),
      events_(events),
      local_count_(spec.local_ranks().size()) {}

AutoWireUp::~AutoWireUp() = default;

// LD_LIBRARY_PATH as the app's ranks get it: its own, else the launch's.
std::string AutoWireUp::library_path(const App& app) const {
  std::string path;
  for (const auto* env : {&spec_.env, &app.env})
    for (const auto& [name, value] : *env)
      if (name == "LD_LIBRARY_PATH") path = value;
  return path;
}

Status AutoWireUp::programs_resolved(const std::vector<std::string>& programs) {
  std::vector<bool> local(spec_.apps.size(), false);
  for (int rank : spec_.local_ranks()) local[static_cast<size_t>(spec_.app_of(rank))] = true;
  std::vector<AppProgram> apps;
  for (size_t i = 0; i < spec_.apps.size(); ++i) {
    AppProgram app{spec_.apps[i].entrypoint, local[i], false, {}};
    if (i < programs.size() && !programs[i].empty()) {
      app.found = true;
      app.mpi = proc::classify_program(programs[i], library_path(spec_.apps[i]));
      if (app.local)
        LAT_LOG(info, "launch", spec_.launch_id, ": --pmi auto: ", programs[i], " ", app.mpi.why,
                ": ", wire_up_name(app.mpi.need), log_fields({{"launch", spec_.launch_id}}));
    }
    apps.push_back(std::move(app));
  }
  auto chosen = choose_wire_up(apps);
  if (!chosen) return chosen.error();
  choice_ = std::move(chosen.value());
  if (choice_.pmi) pmi_ = std::make_unique<PmiWireUp>(loop_, spec_, clock_, names_, pmi_events_);
  if (choice_.pmix)
    pmix_ = std::make_unique<PmixWireUp>(spec_, clock_, pmix_host_, peers_, names_, connects_,
                                         pmix_events_);
  return {};
}

Status AutoWireUp::open(LaunchDir& dir) {
  if (pmi_)
    if (auto opened = pmi_->open(dir); !opened) return opened;
  if (!pmix_) return {};
  auto opened = pmix_->open(dir);
  if (opened) return {};
  if (!choice_.pmix_required_by.empty())
    return make_error(cat(choice_.pmix_required_by,
                          " and needs PMIx, which this agent cannot "
                          "serve: ",
                          opened.error().message));
  // Programs that may use either get PMI-1/PMI-2 alone (a build without libpmix, say).
  LAT_LOG(debug, "launch", spec_.launch_id,
          ": --pmi auto serves PMI-1/PMI-2 only: ", opened.error().message);
  pmix_.reset();
  return {};
}

void AutoWireUp::prepare(std::function<void(Status)> ready) {
  if (pmix_) return pmix_->prepare(std::move(ready));
  ready({});
}

Status AutoWireUp::rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) {
  const auto need = choice_.apps.at(static_cast<size_t>(spec_.app_of(rank)));
  const bool use_pmi = pmi_ && need != proc::MpiWireUp::pmix;
  const bool use_pmix = pmix_ && need != proc::MpiWireUp::pmi;
  if (use_pmi)
    if (auto env = pmi_->rank_environment(rank, in, spawn); !env) return env;
  if (use_pmix)
    if (auto env = pmix_->rank_environment(rank, in, spawn); !env) return env;
  using Wireup = proc::RankEnvInput::Wireup;
  in.wireup = use_pmi && use_pmix ? Wireup::both : use_pmix ? Wireup::pmix : Wireup::pmi;
  return {};
}

void AutoWireUp::rank_started(int rank, net::Process& process) {
  if (pmi_) pmi_->rank_started(rank, process);  // serves its PMI_FD, if it got one
}

void AutoWireUp::initialized(Side side, int rank) {
  for (const auto& [other, other_side] : wired_) {
    if (other_side == side) continue;
    // One fence per node: ranks split between the two would wait in fences never completed.
    return events_.rank_failed(
        rank,
        cat("rank ", rank, " wired up with ", side_name(side == Side::pmix), " but rank ", other,
            " on this node with ", side_name(other_side == Side::pmix),
            ": --pmi auto cannot serve both in one launch (choose with --pmi)"),
        false);
  }
  wired_[rank] = side;
  events_.rank_initialized(rank);
}

void AutoWireUp::finalized(int rank) {
  finalized_.insert(rank);
  events_.rank_finalized(rank);
}

WireUp& AutoWireUp::fencing() const {
  const bool pmix_side =
      pmix_ && (!pmi_ || (!wired_.empty() && wired_.begin()->second == Side::pmix));
  if (pmix_side) return *pmix_;
  return *pmi_;
}

void AutoWireUp::fence_complete(uint64_t epoch, KvStore merged) {
  if (!pmi_ && !pmix_) return;
  fencing().fence_complete(epoch, std::move(merged));
}

void AutoWireUp::fence_failed(uint64_t epoch, const std::string& message) {
  if (pmi_) pmi_->fence_failed(epoch, message);
  if (pmix_) pmix_->fence_failed(epoch, message);
}

std::optional<FenceWait> AutoWireUp::fence_waiting() const {
  if (!pmi_ && !pmix_) return std::nullopt;
  return fencing().fence_waiting();
}

std::vector<pmi::RankStatus> AutoWireUp::status() const {
  std::map<int, pmi::RankStatus> by_rank;
  // PMIx's view first, then PMI's over it for every rank not wired up through PMIx.
  if (pmix_)
    for (auto& st : pmix_->status()) by_rank[st.rank] = st;
  if (pmi_)
    for (auto& st : pmi_->status()) {
      auto it = wired_.find(st.rank);
      if (!pmix_ || it == wired_.end() || it->second == Side::pmi) by_rank[st.rank] = st;
    }
  std::vector<pmi::RankStatus> out;
  for (auto& [rank, st] : by_rank) out.push_back(std::move(st));
  return out;
}

std::vector<int> AutoWireUp::ranks_not_in_fence() const {
  if (!pmi_ && !pmix_) return {};
  return fencing().ranks_not_in_fence();
}

bool AutoWireUp::finalize_missing(int rank) const {
  return (pmi_ && pmi_->finalize_missing(rank)) || (pmix_ && pmix_->finalize_missing(rank));
}

uint64_t AutoWireUp::fence_epoch() const {
  return std::max(pmi_ ? pmi_->fence_epoch() : 0, pmix_ ? pmix_->fence_epoch() : 0);
}

void AutoWireUp::modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) {
  if (pmix_) return pmix_->modex_asked(from, rank, std::move(answer));
  answer(make_error(cat("launch ", spec_.launch_id, " serves no PMIx on ",
                        spec_.peers[static_cast<size_t>(spec_.node_index)].node_id)));
}

void AutoWireUp::close() {
  if (pmi_) pmi_->close();
  if (pmix_) pmix_->close();
}

}  // namespace lattice::agent
