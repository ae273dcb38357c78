// The escape hatch of a launch: lattice-mpi-launcher's requests arrive at this node's exec door
// and go to the named node of the launch (here, or over the sealed link to its agent); that node
// runs the command as the job's user through lattice-rank-exec and `/bin/sh -c`, as ssh would,
// and streams its output and exit status back to the door's client. Commands are killed when
// the launch fails and when their client goes away; a node's launch ends only after them.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "agent/escape_hatch.hpp"
#include "agent/launch.hpp"
#include "agent/launch_rank.hpp"
#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "base/wipe.hpp"
#include "proc/environment.hpp"
#include "secure/secret.hpp"

namespace lattice::agent {
namespace {

// The launch's token: 32 random bytes, as hex (it travels in an environment variable).
std::string new_token() {
  unsigned char bytes[32];
  secure::random_bytes(bytes, sizeof bytes);
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

// A new file in the launch's fresh directory (never an existing one, never through a link),
// made while the directory is still the agent's: the job's user may read it, not change it.
Status write_new_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(cat("cannot create ", path, ": ", std::strerror(errno)));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) return make_error(cat("cannot write ", path));
  return {};
}

}  // namespace

Status Launch::open_exec_door() {
  if (env_.mpi_launcher.empty()) return {};  // an agent without the tool offers no hatch
  std::string token = new_token();
  const std::string socket_name = "exec.sock";
  EscapeHatch hatch{env_.mpi_launcher, launch_dir_->path(), launch_dir_->entry(socket_name), token};
  if (auto s = write_new_file(launch_dir_->entry(kHydraHostFile), hydra_hosts(spec_)); !s) return s;
  if (auto s = write_new_file(launch_dir_->entry(kOpenMpiHostFile), openmpi_hostfile(spec_)); !s)
    return s;
  ExecDoor::Hooks hooks;
  hooks.start = [this](uint64_t client, wire::ExecRequest request) {
    return exec_requested(client, std::move(request));
  };
  hooks.gone = [this](uint64_t client) { exec_client_gone(client); };
  auto door =
      ExecDoor::open(loop_, hatch.exec_socket, spec_.user.uid, std::move(token), std::move(hooks));
  if (!door) return door.error();
  exec_door_ = std::move(door.value());
  if (auto given = launch_dir_->give(socket_name); !given) return given;
  escape_env_ = escape_environment(hatch);
  command_env_ = command_environment(hatch);
  return {};
}

Status Launch::exec_requested(uint64_t client, wire::ExecRequest request) {
  if (policy_.failure()) return make_error(cat("launch ", spec_.launch_id, " is ending"));
  if (request.command.empty()) return make_error("no command given");
  int node = spec_.peers.find(request.node);
  if (node < 0)
    return make_error(cat("node '", request.node, "' is not part of launch ", spec_.launch_id,
                          " (its nodes: ", nodelist_, ")"));
  LAT_LOG(info, "exec", spec_.launch_id, ": command for ", request.node, ": ",
          join(request.command, " "));
  exec_targets_[client] = node;
  if (node == spec_.node_index)
    run_exec(node, client, request.command);
  else
    send_to_node(node, wire::remote_exec({spec_.launch_id, client, request.command}));
  return {};
}

void Launch::exec_client_gone(uint64_t client) {
  auto it = exec_targets_.find(client);
  if (it == exec_targets_.end()) return;
  int node = it->second;
  exec_targets_.erase(it);
  if (node == spec_.node_index)
    remote_exec_kill(node, client);
  else
    send_to_node(node, wire::remote_exec_kill(spec_.launch_id, client));
}

void Launch::remote_exec(int from, wire::ExecCommand command) {
  if (policy_.failure() || (policy_.ended() && !execs_running())) {
    wire::ExecEvent refusal{spec_.launch_id,
                            command.exec_id,
                            false,
                            {},
                            true,
                            0,
                            0,
                            cat("launch ", spec_.launch_id, " has ended on ", env_.node_id)};
    return send_to_node(from, wire::exec_event(refusal));
  }
  run_exec(from, command.exec_id, command.command);
}

void Launch::remote_exec_kill(int from, uint64_t exec_id) {
  auto it = execs_.find({from, exec_id});
  if (it != execs_.end() && it->second->process && !it->second->exit)
    it->second->process->kill_group(SIGKILL);
}

void Launch::remote_exec_event(int from, wire::ExecEvent event) {
  auto it = exec_targets_.find(event.exec_id);
  if (it == exec_targets_.end() || it->second != from) return;  // not asked of that node
  if (event.exited) exec_targets_.erase(it);
  if (exec_door_) exec_door_->send(event.exec_id, event);
}

void Launch::run_exec(int for_node, uint64_t exec_id, const std::vector<std::string>& command) {
  auto exec = std::make_unique<Exec>();
  exec->for_node = for_node;
  exec->exec_id = exec_id;
  proc::RankEnvInput in;
  in.wireup = proc::RankEnvInput::Wireup::none;
  in.world_size = spec_.world_size;
  in.node_index = spec_.node_index;
  in.nnodes = spec_.nnodes();
  in.launch_id = spec_.launch_id;
  in.allocation_id = spec_.allocation_id;
  in.nodelist = nodelist_;
  in.user_env = spec_.env;
  in.launch_env = command_env_;
  in.cxi = cxi_environment();  // mpirun's daemons pass it on to the processes they start
  net::SpawnSpec spawn;
  job_process(spawn, "/bin/sh", {"-c", join(command, " ")}, {}, proc::rank_environment(in));
  Exec* e = exec.get();
  auto process = net::Process::spawn(loop_, spawn, [this, e](net::ExitInfo info) {
    e->exit = info;
    exec_finished(*e);
  });
  wipe(spawn.env);  // it may hold FI_CXI_AUTH_KEY
  if (!process) {
    wire::ExecEvent failed{
        spec_.launch_id,
        exec_id,
        false,
        {},
        true,
        0,
        0,
        cat("cannot start the command on ", env_.node_id, ": ", process.error().message)};
    return exec_output(for_node, exec_id, std::move(failed));
  }
  exec->process = std::move(process.value());
  for (bool is_stderr : {false, true}) {
    auto stream = is_stderr ? exec->process->take_stderr() : exec->process->take_stdout();
    if (!stream) continue;
    ++exec->open_streams;
    stream->start(
        [this, e, is_stderr](std::string_view bytes) {
          exec_output(
              e->for_node, e->exec_id,
              wire::ExecEvent{
                  spec_.launch_id, e->exec_id, is_stderr, std::string(bytes), false, 0, 0, {}});
        },
        [this, e](const Error&) {
          --e->open_streams;
          exec_finished(*e);
        });
    (is_stderr ? exec->err : exec->out) = std::move(stream);
  }
  execs_[{for_node, exec_id}] = std::move(exec);
}

void Launch::exec_output(int for_node, uint64_t exec_id, wire::ExecEvent event) {
  if (for_node == spec_.node_index) {
    if (event.exited) exec_targets_.erase(exec_id);
    if (exec_door_) exec_door_->send(exec_id, event);
  } else {
    send_to_node(for_node, wire::exec_event(event));
  }
}

void Launch::exec_finished(Exec& exec) {
  if (!exec.exit || exec.open_streams > 0) return;  // the exit goes last, after all output
  wire::ExecEvent done{spec_.launch_id,
                       exec.exec_id,
                       false,
                       {},
                       true,
                       static_cast<int>(exec.exit->exit_status),
                       exec.exit->term_signal,
                       {}};
  exec_output(exec.for_node, exec.exec_id, std::move(done));
  auto it = execs_.find({exec.for_node, exec.exec_id});
  if (it == execs_.end()) return;
  finished_execs_.push_back(std::move(it->second));
  execs_.erase(it);
  exec_reaper_.start(0, 0, [this] {
    finished_execs_.clear();
    if (end_after_execs_ && !execs_running()) {
      auto failure = std::move(*end_after_execs_);
      end_after_execs_.reset();
      end(failure);
    }
  });
}

void Launch::kill_execs(int signum) {
  for (auto& [key, exec] : execs_)
    if (exec->process && !exec->exit) exec->process->kill_group(signum);
}

}  // namespace lattice::agent
