// How the processes of a launch start (its ranks, and the escape hatch's commands): as the
// job's user (looked up once, off the loop, by a root agent), in the launch's containment
// group, killed should the agent die, with the launch's CXI credentials.
#include <csignal>

#include "agent/launch.hpp"
#include "agent/launch_times.hpp"
#include "base/log.hpp"
#include "base/wipe.hpp"
#include "proc/environment.hpp"

namespace lattice::agent {
bool Launch::needs_user_lookup() const {
  const JobUser& user = spec_.user;
  return env_.agent_is_root && env_.self &&
         !proc::runs_as(*env_.self, user.uid, user.gid, user.name, user.groups);
}

void Launch::look_up_user() {
  auto lookup =
      UserLookup::start(loop_, env_.rank_exec, spec_.user,
                        [this](Result<proc::ProcessUser> user) { user_known(std::move(user)); });
  if (lookup)
    user_lookup_ = std::move(lookup.value());
  else
    user_known(lookup.error());  // no helper: no rank can start, and the log says why
}

void Launch::user_known(Result<proc::ProcessUser> user) {
  if (!user)
    LAT_LOG(
        warn, "launch", spec_.launch_id, ": cannot start ranks as ", spec_.user.name, ": ",
        user.error().message,
        log_fields(
            {{"launch", spec_.launch_id}, {"node", env_.node_id}, {"uid", cat(spec_.user.uid)}}));
  job_user_.emplace(std::move(user));
  times_.user_known_us = elapsed_us();
  if (spawn_waiting_) spawn_all();
}

// A launch that fails while its user is being looked up starts no rank: the lookup (which may
// be waiting on NSS) is dropped, and spawn_all() reports every rank as not started.
void Launch::give_up_user_lookup() {
  if (!user_lookup_ || job_user_) return;
  user_lookup_.reset();  // kills the helper
  job_user_.emplace(make_error("the launch failed before its user was looked up"));
  if (spawn_waiting_) spawn_timer_.start(0, 0, [this] { spawn_all(); });
}

Result<std::unique_ptr<net::Process>> Launch::start_command(
    const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
    std::function<void(net::ExitInfo)> on_exit) {
  proc::RankEnvInput in;
  in.wireup = proc::RankEnvInput::Wireup::none;
  in.world_size = spec_.world_size;
  in.node_index = spec_.node_index;
  in.nnodes = spec_.nnodes();
  in.launch_id = spec_.launch_id;
  in.allocation_id = spec_.allocation_id;
  in.nodelist = nodelist_;
  in.user_env = spec_.env;
  in.launch_env = env;
  in.cxi = cxi_environment();  // mpirun's daemons pass it on to the processes they start
  net::SpawnSpec spawn;
  job_process(spawn, "/bin/sh", {"-c", command}, {}, proc::rank_environment(in));
  auto process = net::Process::spawn(loop_, spawn, std::move(on_exit));
  wipe(spawn.env);  // it may hold FI_CXI_AUTH_KEY
  return process;
}

// A process of the launch (a rank, an escape-hatch command), killed if the agent dies. It
// starts directly, the guard's work done between the clone and the exec (one exec per rank),
// when the job's user is the agent's own or, for a root agent, once the job's user has been
// looked up (the child then becomes that user first). Otherwise lattice-rank-exec switches users
// (and reads passwd, which must not block the agent's loop) before it execs the program.
void Launch::job_process(net::SpawnSpec& spawn, const std::string& program,
                         const std::vector<std::string>& args, const std::vector<int>& cpus,
                         std::vector<std::string> env) const {
  spawn.parent_death_signal = SIGKILL;
  if (group_) {
    spawn.cgroup_procs_fd = group_->join_fd();
    spawn.cgroup_dir_fd = group_->clone_into_fd();
    spawn.extra_cgroup_procs_fds = group_->extra_join_fds();
  }
  if (spec_.umask) spawn.umask = static_cast<int>(*spec_.umask);
  for (const auto& limit : spec_.limits)
    spawn.limits.push_back(net::ChildLimit{proc::rlimit_of(limit.resource), limit.soft});
  const JobUser& user = spec_.user;
  const proc::ProcessUser* as = nullptr;
  if (env_.self && proc::runs_as(*env_.self, user.uid, user.gid, user.name, user.groups)) {
    as = env_.self;
  } else if (job_user_ && *job_user_) {
    as = &job_user_->value();
    spawn.user = net::ChildUser{as->uid, as->gid, as->groups};
  }
  if (as) {
    spawn.file = program;
    spawn.argv = {program};
    spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
    spawn.cwd = spec_.workdir;
    spawn.cpus = cpus;
    proc::set_user_variables(env, *as);
  } else {
    spawn.file = env_.rank_exec;
    spawn.argv = rank_exec_argv(program, args, cpus);
    env.push_back(cat("LATTICE_AGENT_PID=", ::getpid()));
  }
  spawn.env = std::move(env);
}

// lattice-rank-exec [--user U:G:NAME [--groups ...]] [--chdir DIR] -- PROGRAM ARGS: the helper
// becomes the job's user and enters the directory as that user, so the agent never does either.
std::vector<std::string> Launch::rank_exec_argv(const std::string& program,
                                                const std::vector<std::string>& args,
                                                const std::vector<int>& cpus) const {
  const JobUser& user = spec_.user;
  std::vector<std::string> argv = {env_.rank_exec, "--user",
                                   cat(user.uid, ':', user.gid, ':', user.name)};
  if (user.groups) argv.insert(argv.end(), {"--groups", group_list(*user.groups)});
  if (!spec_.workdir.empty()) argv.insert(argv.end(), {"--chdir", spec_.workdir});
  if (!cpus.empty()) argv.insert(argv.end(), {"--cpus", proc::cpu_list(cpus)});
  argv.insert(argv.end(), {"--", program});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::optional<proc::RankEnvInput::Cxi> Launch::cxi_environment() const {
  if (!spec_.cxi) return std::nullopt;
  const auto& c = *spec_.cxi;
  return proc::RankEnvInput::Cxi{c.vni, c.svc_id,
                                 reinterpret_cast<const char*>(c.auth_key_hex.data())};
}

}  // namespace lattice::agent
