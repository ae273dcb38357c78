#include "agent/launch.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "agent/launch_rank.hpp"
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
                                     NodeLinks& peers, WireUpEvents& events) {
  if (spec.pmix) return std::make_unique<PmixWireUp>(spec, *env.clock, env.pmix, peers, events);
  return std::make_unique<PmiWireUp>(loop, spec, *env.clock, names, events);
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
      env_(env),
      sink_(sink),
      peers_(peers),
      started_ns_(env.clock->now_ns()),
      names_(loop, spec_, peers),
      wire_up_(make_wire_up(loop, spec_, env, names_, peers, *this)),
      fence_(
          loop, spec_, *wire_up_, [this] { return elapsed_us(); },
          [this](const std::vector<int>& nodes, rpc::Outgoing message) {
            send_to_nodes(nodes, std::move(message));
          },
          [this](uint64_t epoch, const std::string& message) {
            run(policy_.fence_failed_above(epoch, message));
          }),
      watch_timer_(loop),
      links_timer_(loop),
      spawn_timer_(loop),
      policy_(policy::LaunchShape{env.node_id, spec_.node_index, spec_.head_node, spec_.nnodes(),
                                  spec_.local_ranks(), spec_.time_limit_ms, spec_.kill_on_bad_exit},
              kPolicyTimes),
      hatch_(loop, spec_, env.node_id, *this) {
  auto local = spec_.local_ranks();
  for (size_t i = 0; i < local.size(); ++i) {
    auto rank = std::make_unique<Rank>();
    rank->rank = local[i];
    rank->local_rank = static_cast<int>(i);
    rank->app = spec_.app_of(local[i]);
    ranks_.push_back(std::move(rank));
  }
}

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
      return make_error(cat("cannot execute '", app.entrypoint, "' on ", env_.node_id,
                            ": not found or not executable"));
    program = std::move(resolved.value());
  }
  if (spec_.cpu_bind.kind != proc::CpuBind::Kind::none) {
    if (!env_.topology || !*env_.topology)
      return make_error(cat("--cpu-bind on ", env_.node_id, ": ",
                            env_.topology ? env_.topology->error().message : "no topology"));
    for (auto& rank : ranks_) {
      auto cpus = proc::cpus_for(spec_.cpu_bind, env_.topology->value(), rank->local_rank);
      if (!cpus) return make_error(cat("--cpu-bind on ", env_.node_id, ": ", cpus.error().message));
      rank->cpus = std::move(cpus.value());
    }
  }
  const size_t cpus = proc::usable_cpus();
  ranks_batch_ = spec_.ranks_batch(ranks_.size(), cpus);
  if (ranks_batch_ && spec_.sched == RankScheduling::automatic)
    LAT_LOG(info, "launch", spec_.launch_id, ": ", ranks_.size(), " ranks on ", cpus,
            " CPUs: they run under SCHED_BATCH (--sched auto)");
  if (env_.containment) {
    auto group = env_.containment->make_group(cat("LATTICE_LAUNCH_ID=", spec_.launch_id));
    if (!group)
      return make_error(cat("cannot contain the launch's processes on ", env_.node_id, ": ",
                            group.error().message));
    group_ = std::move(group.value());
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
  LAT_LOG(info, "launch", spec_.launch_id, ": spawned ", started, " of its ", ranks_.size(),
          " ranks (", spec_.world_size, " in all)");
  run(policy_.spawn_finished());
}

Status Launch::spawn_rank(Rank& rank) {
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
  in.slurm_compat = spec_.slurm_compat;
  in.user_env = app.env.empty() ? spec_.env : proc::merge_env(spec_.env, app.env);
  in.launch_env = hatch_.rank_env();
  in.cxi = cxi_environment();

  net::SpawnSpec spawn;
  if (auto wired = wire_up_->rank_environment(rank.rank, in, spawn); !wired) return wired;
  job_process(spawn, programs_[static_cast<size_t>(rank.app)], app.args, rank.cpus,
              proc::rank_environment(in));
  spawn.stdin_pipe = spec_.gets_input(rank.rank);
  spawn.sched_batch = ranks_batch_;

  Rank* r = &rank;
  auto process =
      net::Process::spawn(loop_, spawn, [this, r](net::ExitInfo info) { on_exit(*r, info); });
  wipe(spawn.env);  // it may hold FI_CXI_AUTH_KEY
  if (!process) return process.error();
  rank.process = std::move(process.value());
  rank.pid = rank.process->pid();
  wire_up_->rank_started(rank.rank, *rank.process);
  if ((rank.in_stream = rank.process->take_stdin())) {
    rank.in_stream->set_write_limit(kRankWriteLimitBytes);
    feed_input(rank);
  }
  attach_output(rank, rank.process->take_stdout(), false);
  attach_output(rank, rank.process->take_stderr(), true);
  return {};
}

void Launch::attach_output(Rank& rank, std::unique_ptr<net::Stream> stream, bool is_stderr) {
  if (!stream) return;
  Rank* r = &rank;
  net::Stream* s = stream.get();
  (is_stderr ? rank.err_stream : rank.out_stream) = std::move(stream);
  s->start(
      [this, r, is_stderr](std::string_view bytes) {
        auto& lines = is_stderr ? r->err_lines : r->out_lines;
        std::string batch;
        for (auto& line : lines.feed(bytes)) batch += line;
        if (!batch.empty()) sink_.output(*this, r->rank, is_stderr, std::move(batch));
      },
      [this, r, is_stderr](const Error&) {
        auto& lines = is_stderr ? r->err_lines : r->out_lines;
        if (auto rest = lines.flush()) sink_.output(*this, r->rank, is_stderr, std::move(*rest));
        run(policy_.pipe_closed(r->rank));
      });
}

void Launch::pause_output() {
  for (auto& r : ranks_)
    for (auto* stream : {r->out_stream.get(), r->err_stream.get()})
      if (stream) stream->pause_reading();
  run(policy_.output_paused());
}

void Launch::resume_output() {
  for (auto& r : ranks_)
    for (auto* stream : {r->out_stream.get(), r->err_stream.get()})
      if (stream) stream->resume_reading();
  run(policy_.output_resumed());
}

void Launch::on_exit(Rank& rank, net::ExitInfo info) {
  proc::ExitStatus status{static_cast<int>(info.exit_status), info.term_signal};
  LAT_LOG(debug, "launch", spec_.launch_id, ": ", where(rank.rank), " ", proc::describe(status));
  sink_.rank_exited(*this, rank.rank, rank.pid, status);
  auto actions = policy_.exited(rank.rank, status, rank.initialized && !rank.finalized);
  if (std::none_of(ranks_.begin(), ranks_.end(),
                   [this](auto& r) { return policy_.running(r->rank); })) {
    times_.exited_us = elapsed_us();
    // At once, not at the end: a stray that holds the ranks' output pipes would hold the end.
    if (!hatch_.running()) sweep_strays();
  }
  run(std::move(actions));
}

void Launch::sweep_strays() {
  if (sweep_) sweep_->start();
}

void Launch::input(std::string data, bool eof) {
  input_received_ += data.size();
  bool waiting = false;  // an input rank of this node not spawned yet
  for (auto& rank : ranks_) {
    if (!spec_.gets_input(rank->rank)) continue;
    if (!rank->process && !policy_.failure()) waiting = true;
    if (!rank->in_stream) continue;
    if (!data.empty()) rank->in_stream->write(data);
    if (eof) rank->in_stream->end({});
  }
  if (eof) input_ended_ = true;
  if (waiting && pending_input_.size() + data.size() > kMaxPendingInputBytes)
    LAT_LOG(warn, "launch", spec_.launch_id, ": stdin beyond ", kMaxPendingInputBytes,
            " bytes before the input rank started is dropped");
  else if (waiting)
    pending_input_ += data;
  report_input_taken();
}

void Launch::report_input_taken() {
  // What the slowest input rank has not taken: queued for its pipe, or held until it starts.
  uint64_t held = 0;
  for (auto& rank : ranks_) {
    if (!spec_.gets_input(rank->rank)) continue;
    if (rank->in_stream) {
      size_t queued = rank->in_stream->write_queue_bytes();
      held = std::max<uint64_t>(held, queued);
      if (queued > 0) rank->in_stream->when_drained([this] { report_input_taken(); });
    } else if (!rank->process && !policy_.failure()) {
      held = std::max<uint64_t>(held, pending_input_.size());
    }
  }
  uint64_t taken = input_received_ - std::min(held, input_received_);
  if (taken < input_reported_ + kInputReportBytes) return;
  input_reported_ = taken;
  sink_.input_taken(*this, taken);
}

// A freshly spawned input rank gets what came before it, and the end if it came too.
void Launch::feed_input(Rank& rank) {
  if (!pending_input_.empty()) rank.in_stream->write(pending_input_);
  if (input_ended_) rank.in_stream->end({});
  report_input_taken();
}

void Launch::forward_signal(int signum) { run(policy_.signal(signum)); }
void Launch::launcher_lost(const std::string& reason) { run(policy_.launcher_lost(reason)); }
void Launch::shutdown(int signum, bool kill_now) { run(policy_.shutdown(signum, kill_now)); }

void Launch::run(std::vector<policy::Action> actions) {
  for (auto& action : actions) {
    if (auto* first = std::get_if<policy::FirstFailure>(&action)) {
      LAT_LOG(warn, "launch", spec_.launch_id, ": ", policy::describe(first->failure));
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
      for (auto& r : ranks_) {
        if (r->out_stream) r->out_stream->close();
        if (r->err_stream) r->err_stream->close();
      }
    } else if (auto* end_of = std::get_if<policy::ReportEnd>(&action)) {
      end(end_of->failure);
    }
  }
}

void Launch::kill_running(int signum) {
  for (auto& rank : ranks_)
    if (rank->process && policy_.running(rank->rank)) rank->process->kill_group(signum);
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
  sink_.ended(*this, wire::LaunchEnded{spec_.launch_id, spec_.node_index, failure, stragglers_,
                                       times_, sweep_ ? sweep_->strays() : 0});
}

void Launch::commands_done() {
  if (!end_after_execs_) return;
  auto failure = std::move(*end_after_execs_);
  end_after_execs_.reset();
  end(failure);
}

std::vector<std::string> Launch::bindings() const {
  std::vector<std::string> out;
  for (auto& rank : ranks_)
    if (!rank->cpus.empty()) out.push_back(cat(rank->rank, ':', proc::cpu_list(rank->cpus)));
  return out;
}

std::vector<std::pair<int, int>> Launch::rank_pids() const {
  std::vector<std::pair<int, int>> out;
  for (auto& rank : ranks_) out.emplace_back(rank->rank, rank->pid);
  return out;
}

uint64_t Launch::elapsed_us() const { return (env_.clock->now_ns() - started_ns_) / 1000; }
uint64_t Launch::age_ms() const { return elapsed_us() / 1000; }
uint64_t Launch::now_ms() const { return env_.clock->now_ms(); }

Launch::Rank* Launch::find_rank(int rank) {
  for (auto& r : ranks_)
    if (r->rank == rank) return r.get();
  return nullptr;
}

std::string Launch::where(int rank) const { return cat("rank ", rank, " on ", env_.node_id); }

}  // namespace lattice::agent
