#include "agent/launch.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "agent/auto_wire_up.hpp"
#include "agent/launch_times.hpp"
#include "agent/no_wire_up.hpp"
#include "agent/pmi_wire_up.hpp"
#include "agent/pmix_wire_up.hpp"
#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/wipe.hpp"
#include "proc/environment.hpp"
#include "proc/executable.hpp"

namespace lattice::agent {
namespace {

std::unique_ptr<WireUp> make_wire_up(net::Loop& loop, const LaunchSpec& spec,
                                     const LaunchEnvironment& env, LaunchNames& names,
                                     LaunchConnects& connects, NodeLinks& peers,
                                     WireUpEvents& events) {
  switch (spec.pmi) {
    case wire::PmiMode::pmix:
      return std::make_unique<PmixWireUp>(spec, *env.clock, env.pmix, peers, names, connects,
                                          events);
    case wire::PmiMode::none:
      return std::make_unique<NoWireUp>();
    case wire::PmiMode::automatic:
      return std::make_unique<AutoWireUp>(loop, spec, *env.clock, names, connects, env.pmix, peers,
                                          events);
    case wire::PmiMode::pmi:
      break;
  }
  return std::make_unique<PmiWireUp>(loop, spec, *env.clock, names, events);
}

// SLURM_TASKS_PER_NODE of the launch's layout.
std::string tasks_per_node(const LaunchSpec& spec) {
  std::vector<int> counts(spec.nnodes(), 0);
  for (int node : spec.rank_nodes) ++counts[static_cast<size_t>(node)];
  return proc::slurm_tasks_per_node(counts);
}

// The PATH an app's ranks get: its own, else the launch's, else the default.
std::string path_of(const LaunchSpec& spec, const App& app) {
  std::string path = proc::kDefaultPath;
  for (const auto* env : {&spec.env, &app.env})
    for (const auto& [name, value] : *env)
      if (name == "PATH") path = value;
  return path;
}

}  // namespace

Launch::Launch(net::Loop& loop, LaunchSpec spec, const LaunchEnvironment& env, LaunchSink& sink,
               NodeLinks& peers)
    : loop_(loop),
      spec_(std::move(spec)),
      nodelist_(spec_.peers.joined()),
      slurm_nodelist_(spec_.slurm_compat ? proc::slurm_nodelist(nodelist_) : ""),
      slurm_tasks_per_node_(spec_.slurm_compat ? tasks_per_node(spec_) : ""),
      env_(env),
      sink_(sink),
      peers_(peers),
      started_ns_(env.clock->now_ns()),
      family_(spec_),
      names_(loop, spec_, peers, family_.proc_nodes(), env.parents),
      connects_(loop, spec_, peers, family_.proc_nodes(), env.parents),
      wire_up_(make_wire_up(loop, spec_, env, names_, connects_, peers, *this)),
      fence_(
          loop, spec_, *wire_up_, [this] { return elapsed_us(); },
          [this](const std::vector<int>& nodes, rpc::Outgoing message) {
            send_to_nodes(nodes, std::move(message));
          },
          [this](uint64_t epoch, const std::string& message) {
            run(policy_.fence_failed_above(epoch, message));
          }),
      ranks_(spec_, *this),
      watch_timer_(loop),
      links_timer_(loop),
      spawn_timer_(loop),
      policy_(policy::LaunchShape{env.node_id, spec_.node_index, spec_.head_node, spec_.nnodes(),
                                  spec_.local_ranks(), spec_.time_limit_ms, spec_.kill_on_bad_exit,
                                  spec_.warn_signal, spec_.warn_before_ms},
              kPolicyTimes),
      hatch_(loop, spec_, env.node_id, *this) {}

Launch::~Launch() {
  // The owner destroys a launch only after it ended; anything still alive here (agent
  // teardown) is killed rather than orphaned.
  kill_running(SIGKILL);
  if (group_ && sweep_ && !sweep_->finished()) group_->signal(SIGKILL);
}

Status Launch::start() {
  // Looked up as the agent sees the file system; lattice-rank-exec's exec, as the job's user,
  // has the last word on permissions.
  // Only the apps with ranks here need to exist here.
  programs_.assign(spec_.apps.size(), std::string());
  for (auto& rank : ranks_) {
    const App& app = spec_.apps[static_cast<size_t>(rank->app)];
    std::string& program = programs_[static_cast<size_t>(rank->app)];
    if (!program.empty()) continue;
    auto resolved = proc::resolve_executable(app.entrypoint, path_of(spec_, app), spec_.workdir);
    if (!resolved)
      return make_error(cat("cannot execute '", app.entrypoint, "' on ", env_.node_id, ": ",
                            resolved.error().message));
    program = std::move(resolved.value());
  }
  if (spec_.pmi == wire::PmiMode::automatic) {
    // The other apps too, where this node has them: an MPMD mix is refused on every node.
    std::vector<std::string> programs = programs_;
    for (size_t i = 0; i < programs.size(); ++i) {
      const App& app = spec_.apps[i];
      if (programs[i].empty())
        if (auto found =
                proc::resolve_executable(app.entrypoint, path_of(spec_, app), spec_.workdir))
          programs[i] = std::move(found.value());
    }
    if (auto chosen = wire_up_->programs_resolved(programs); !chosen)
      return make_error(cat("--pmi auto on ", env_.node_id, ": ", chosen.error().message));
  }
  const size_t cpus = proc::usable_cpus();
  if (auto assigned = ranks_.assign(
          NodeResources{env_.node_id, env_.topology, allocation_.cpus, cpus, env_.gpus});
      !assigned)
    return assigned;
  ranks_batch_ = spec_.ranks_batch(ranks_.size(), cpus);
  if (ranks_batch_ && spec_.sched == RankScheduling::automatic)
    LAT_LOG(info, "launch", spec_.launch_id, ": ", ranks_.size(), " ranks on ", cpus,
            " CPUs: they run under SCHED_BATCH (--sched auto)",
            log_fields({{"launch", spec_.launch_id}, {"node", env_.node_id}}));
  if (env_.containment) {
    const std::string marker = cat("LATTICE_LAUNCH_ID=", spec_.launch_id);
    proc::GroupLimits limits;
    limits.memory_bytes = spec_.memory_bytes;
    auto group = allocation_.group ? allocation_.group->make_group(marker, limits)
                                   : env_.containment->make_group(marker, limits);
    if (!group)
      return make_error(cat("cannot contain the launch's processes on ", env_.node_id, ": ",
                            group.error().message));
    group_ = std::move(group.value());
    oom_kills_seen_ = group_->oom_kills().value_or(0);  // (a reused cgroup's count goes on)
    if (!limits.empty())
      LAT_LOG(info, "launch", spec_.launch_id, ": limits: ", group_->limits_note(),
              log_fields({{"launch", spec_.launch_id}, {"node", env_.node_id}}));
    sweep_ = std::make_unique<StraySweep>(loop_, *group_, kStrayGraceMs, [this](uint32_t) {
      if (!end_after_sweep_) return;
      auto failure = std::move(*end_after_sweep_);
      end_after_sweep_.reset();
      end(failure);
    });
  }
  if (auto opened = open_doors(); !opened) {
    wire_up_->close();
    hatch_.close_door();
    if (launch_dir_) remove_launch_dir(launch_dir_->path());
    launch_dir_.reset();
    return opened.error();
  }

  if (needs_user_lookup()) look_up_user();
  watch_timer_.start(kWatchPeriodMs, kWatchPeriodMs, [this] { check_fence_deadline(); });
  if (fence_.spans_nodes())
    links_timer_.start(kNeighbourLinksAfterMs, 0, [this] { hold_neighbour_links(); });
  // Spawning waits for the next loop turn: the launcher hears "accepted" first, so fan-out to
  // many agents is not serialised behind each agent's forks.
  wire_up_->prepare([this](Status prepared) {
    if (!prepared) {
      for (auto& rank : ranks_) run(policy_.not_spawned(rank->rank, prepared.error().message));
      return;
    }
    spawn_timer_.start(0, 0, [this] { spawn_all(); });
  });
  if (env_.metrics) {
    env_.metrics->launch_started();
    fence_.on_released([metrics = env_.metrics](uint64_t us) { metrics->fence_released(us); });
  }
  return {};
}

void Launch::spawn_all() {
  if (user_lookup_ && !job_user_) {
    spawn_waiting_ = true;
    return;
  }
  spawn_waiting_ = false;
  size_t started = 0;
  for (auto& rank : ranks_) {
    if (policy_.failure()) {  // an earlier spawn failed (or the launch was aborted): start no more
      run(policy_.not_spawned(rank->rank, ""));
      continue;
    }
    auto spawned = spawn_rank(*rank);
    if (!spawned) {
      run(policy_.not_spawned(rank->rank, spawned.error().message));
      continue;
    }
    ++started;
    run(policy_.spawned(rank->rank, (rank->out_stream ? 1 : 0) + (rank->err_stream ? 1 : 0)));
  }
  times_.spawned_us = elapsed_us();
  ranks_.starting_done();
  LAT_LOG(info, "launch", spec_.launch_id, ": spawned ", started, " of its ", ranks_.size(),
          " ranks (", spec_.world_size, " in all)",
          log_fields({{"launch", spec_.launch_id}, {"node", env_.node_id}}));
  run(policy_.spawn_finished());
}

Status Launch::spawn_rank(RankSet::Rank& rank) {
  if (job_user_ && !*job_user_) return job_user_->error();
  const App& app = spec_.apps[static_cast<size_t>(rank.app)];
  proc::RankEnvInput in;
  in.rank = rank.rank;
  in.world_size = spec_.world_size;
  in.local_rank = rank.local_rank;
  in.local_size = static_cast<int>(ranks_.size());
  in.node_index = spec_.node_index;
  in.nnodes = spec_.nnodes();
  in.jobid = spec_.launch_id;
  in.launch_id = spec_.launch_id;
  in.allocation_id = spec_.allocation_id;
  in.nodelist = nodelist_;
  in.slurm_nodelist = slurm_nodelist_;
  in.slurm_tasks_per_node = slurm_tasks_per_node_;
  in.slurm_compat = spec_.slurm_compat;
  in.cpus_per_task = spec_.cpus_per_task;
  in.user_env = app.env.empty() ? spec_.env : proc::merge_env(spec_.env, app.env);
  in.launch_env = allocation_.env;
  in.launch_env.insert(in.launch_env.end(), hatch_.rank_env().begin(), hatch_.rank_env().end());
  if (!srun_dir_.empty())
    in.launch_env.emplace_back("PATH", cat(srun_dir_, ':', path_of(spec_, app)));
  in.launch_env.insert(in.launch_env.end(), rank.gpu_env.begin(), rank.gpu_env.end());
  in.cxi = cxi_environment();

  net::SpawnSpec spawn;
  if (auto wired = wire_up_->rank_environment(rank.rank, in, spawn); !wired) return wired;
  job_process(spawn, programs_[static_cast<size_t>(rank.app)], app.args, rank.cpus,
              proc::rank_environment(in));
  spawn.sched_batch = ranks_batch_;
  auto started = ranks_.start(loop_, rank, spawn);
  wipe(spawn.env);  // it may hold FI_CXI_AUTH_KEY
  if (!started) return started;
  wire_up_->rank_started(rank.rank, *rank.process);
  return {};
}

void Launch::pause_output() {
  ranks_.pause_output();
  run(policy_.output_paused());
}

void Launch::resume_output() {
  ranks_.resume_output();
  run(policy_.output_resumed());
}

proc::ExitStatus Launch::out_of_memory_or(proc::ExitStatus status) {
  if (status.signal != SIGKILL || !group_ || sent_sigkill_) return status;
  auto kills = group_->oom_kills();
  if (!kills || *kills <= oom_kills_seen_) return status;
  // The kernel counts the kill before it sends the signal: this SIGKILL is one it counted.
  ++oom_kills_seen_;
  status.out_of_memory = true;
  status.memory_limit = group_->limits_unenforced() ? 0 : spec_.memory_bytes;
  return status;
}

std::string Launch::unenforced_limits() const {
  if (!spec_.memory_bytes) return "";
  if (!group_)
    return cat("memory ", size_text(spec_.memory_bytes), ": not enforced: not contained");
  return group_->limits_unenforced() ? group_->limits_note() : "";
}

void Launch::rank_exited(int rank, int pid, net::ExitInfo info) {
  proc::ExitStatus status =
      out_of_memory_or({static_cast<int>(info.exit_status), info.term_signal});
  LAT_LOG(debug, "launch", spec_.launch_id, ": ", where(rank), " ", proc::describe(status));
  sink_.rank_exited(*this, rank, pid, status);
  // Ranks ending because the launch already failed are no news to anybody.
  const bool news = !failing();
  auto actions = policy_.exited(rank, status, wire_up_->finalize_missing(rank));
  if (!ranks_.any_running()) {
    times_.exited_us = elapsed_us();
    // At once, not at the end: a stray that holds the ranks' output pipes would hold the end.
    if (!hatch_.running()) sweep_strays();
  }
  if (!news) return run(std::move(actions));
  // What the exit makes the launch do (kill the others) waits until they have heard of it; the
  // wire-up, which the launch owns, calls back only while it lives.
  wire_up_->rank_ended(rank, status,
                       [this, actions = std::move(actions)]() mutable { run(std::move(actions)); });
}

void Launch::after_notice(std::function<void()> then) {
  auto& timer = notice_timers_.emplace_back(std::make_unique<net::Timer>(loop_));
  timer->start(kEndNoticeMs, 0, std::move(then));
}

void Launch::sweep_strays() {
  if (sweep_) sweep_->start();
}

void Launch::input(std::string data, bool eof) { ranks_.input(data, eof); }

void Launch::forward_signal(int signum) { run(policy_.signal(signum)); }
void Launch::launcher_lost(const std::string& reason) { run(policy_.launcher_lost(reason)); }
void Launch::shutdown(int signum, bool kill_now) { run(policy_.shutdown(signum, kill_now)); }

void Launch::run(std::vector<policy::Action> actions) {
  for (auto& action : actions) {
    if (auto* first = std::get_if<policy::FirstFailure>(&action)) {
      const Failure& f = first->failure;
      LAT_LOG(warn, "launch", spec_.launch_id, ": ", policy::describe(f),
              log_fields({{"launch", spec_.launch_id},
                          {"node", env_.node_id},
                          {"reason", policy::kind_name(f.kind)},
                          {"rank", f.rank >= 0 ? cat(f.rank) : "-"}}));
      give_up_user_lookup();
    } else if (auto* kill = std::get_if<policy::KillRanks>(&action)) {
      kill_running(kill->signum);
    } else if (auto* abort = std::get_if<policy::SendAbort>(&action)) {
      send_abort(abort->node, abort->failure);
    } else if (auto* start = std::get_if<policy::StartTimer>(&action)) {
      auto& timer = timers_[start->timer];
      if (!timer) timer = std::make_unique<net::Timer>(loop_);
      timer->start(start->ms, 0, [this, id = start->timer] { run(policy_.timer_fired(id)); });
    } else if (auto* stop = std::get_if<policy::StopTimer>(&action)) {
      if (auto it = timers_.find(stop->timer); it != timers_.end()) it->second->stop();
    } else if (auto* snapshot = std::get_if<policy::SnapshotStragglers>(&action)) {
      stragglers_ = fence_.stragglers(snapshot->epoch, now_ms());
    } else if (std::holds_alternative<policy::CloseOutputs>(action)) {
      ranks_.close_output();
    } else if (auto* end_of = std::get_if<policy::ReportEnd>(&action)) {
      end(end_of->failure);
    }
  }
}

void Launch::kill_running(int signum) {
  if (signum == SIGKILL) sent_sigkill_ = true;
  ranks_.kill(signum);
  hatch_.kill(signum);
}

void Launch::end(const std::optional<Failure>& failure) {
  // Commands run here through the escape hatch belong to the launch: a finished node waits for
  // them (a failed launch has killed them already, and their ends are near).
  if (hatch_.running()) {
    end_after_execs_ = failure;
    return;
  }
  if (sweep_ && !sweep_->finished()) {
    end_after_sweep_ = failure;
    return sweep_strays();
  }
  watch_timer_.stop();
  links_timer_.stop();
  link_holds_.clear();  // neighbours' links linger for the next launch, silent
  hatch_.close_door();
  spec_.cxi.reset();  // the key: nothing runs here any more that could need it
  wire_up_->close();
  if (launch_dir_) remove_launch_dir(launch_dir_->path());
  launch_dir_.reset();
  times_.fences.assign(fence_.phases().fences().begin(), fence_.phases().fences().end());
  if (env_.metrics) env_.metrics->launch_ended(failure ? policy::kind_name(failure->kind) : "");
  sink_.ended(*this, wire::LaunchEnded{spec_.launch_id, spec_.node_index, failure, stragglers_,
                                       times_, sweep_ ? sweep_->strays() : 0});
}

void Launch::commands_done() {
  if (!end_after_execs_) return;
  auto failure = std::move(*end_after_execs_);
  end_after_execs_.reset();
  end(failure);
}

std::vector<std::string> Launch::bindings() const { return ranks_.bindings(); }
std::vector<std::pair<int, int>> Launch::rank_pids() const { return ranks_.pids(); }

uint64_t Launch::elapsed_us() const { return (env_.clock->now_ns() - started_ns_) / 1000; }
uint64_t Launch::age_ms() const { return elapsed_us() / 1000; }
uint64_t Launch::now_ms() const { return env_.clock->now_ms(); }

std::string Launch::where(int rank) const { return cat("rank ", rank, " on ", env_.node_id); }

}  // namespace lattice::agent
