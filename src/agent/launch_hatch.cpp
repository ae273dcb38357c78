#include "agent/launch_hatch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "agent/escape_hatch.hpp"
#include "agent/socket_dir.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
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

LaunchHatch::LaunchHatch(net::Loop& loop, const LaunchSpec& spec, std::string node_id, Host& host)
    : loop_(loop), spec_(spec), node_id_(std::move(node_id)), host_(host), reaper_(loop) {}

LaunchHatch::~LaunchHatch() { kill(SIGKILL); }

Status LaunchHatch::open(const LaunchDir& dir, const std::string& mpi_launcher,
                         const std::optional<HatchHosts>& allocation) {
  if (mpi_launcher.empty()) return {};  // an agent without the tool offers no hatch
  std::string token = new_token();
  const std::string socket_name = "exec.sock";
  EscapeHatch hatch{mpi_launcher, dir.path(), dir.entry(socket_name), token};
  const std::string hydra = allocation ? hydra_hosts(*allocation) : hydra_hosts(spec_);
  const std::string openmpi = allocation ? openmpi_hostfile(*allocation) : openmpi_hostfile(spec_);
  if (auto s = write_new_file(dir.entry(kHydraHostFile), hydra); !s) return s;
  if (auto s = write_new_file(dir.entry(kOpenMpiHostFile), openmpi); !s) return s;
  ExecDoor::Hooks hooks;
  hooks.start = [this](uint64_t client, lattice::wire::ExecRequest request) {
    return requested(client, std::move(request));
  };
  hooks.gone = [this](uint64_t client) { client_gone(client); };
  auto door =
      ExecDoor::open(loop_, hatch.exec_socket, spec_.user.uid, std::move(token), std::move(hooks));
  if (!door) return door.error();
  door_ = std::move(door.value());
  if (auto given = dir.give(socket_name); !given) return given;
  rank_env_ = spec_.hatch_command ? command_environment(hatch) : escape_environment(hatch);
  command_env_ = command_environment(hatch);
  return {};
}

void LaunchHatch::close_door() { door_.reset(); }

Status LaunchHatch::requested(uint64_t client, lattice::wire::ExecRequest request) {
  if (host_.failing()) return make_error(cat("launch ", spec_.launch_id, " is ending"));
  if (request.command.empty()) return make_error("no command given");
  int node = spec_.peers.find(request.node);
  if (node < 0)
    return make_error(cat("node '", request.node, "' is not part of launch ", spec_.launch_id,
                          " (its nodes: ", spec_.peers.joined(), ")"));
  LAT_LOG(info, "exec", spec_.launch_id, ": command for ", request.node, ": ",
          join(request.command, " "),
          log_fields({{"launch", spec_.launch_id}, {"node", node_id_}, {"peer", request.node}}));
  targets_[client] = node;
  if (node == spec_.node_index)
    run(node, client, request.command);
  else
    host_.send_to_node(node,
                       lattice::wire::remote_exec({spec_.launch_id, client, request.command}));
  return {};
}

void LaunchHatch::client_gone(uint64_t client) {
  auto it = targets_.find(client);
  if (it == targets_.end()) return;
  int node = it->second;
  targets_.erase(it);
  if (node == spec_.node_index)
    remote_exec_kill(node, client);
  else
    host_.send_to_node(node, lattice::wire::remote_exec_kill(spec_.launch_id, client));
}

lattice::wire::ExecEvent LaunchHatch::end_event(uint64_t exec_id, std::string error) const {
  lattice::wire::ExecEvent event;
  event.launch_id = spec_.launch_id;
  event.exec_id = exec_id;
  event.exited = true;
  event.error = std::move(error);
  return event;
}

void LaunchHatch::remote_exec(int from, lattice::wire::ExecCommand command) {
  if (host_.failing() || (host_.ended() && !running()))
    return host_.send_to_node(
        from, lattice::wire::exec_event(end_event(
                  command.exec_id, cat("launch ", spec_.launch_id, " has ended on ", node_id_))));
  run(from, command.exec_id, command.command);
}

void LaunchHatch::remote_exec_kill(int from, uint64_t exec_id) {
  auto it = execs_.find({from, exec_id});
  if (it != execs_.end() && it->second->process && !it->second->exit)
    it->second->process->kill_group(SIGKILL);
}

void LaunchHatch::remote_exec_event(int from, lattice::wire::ExecEvent event) {
  auto it = targets_.find(event.exec_id);
  if (it == targets_.end() || it->second != from) return;  // not asked of that node
  if (event.exited) targets_.erase(it);
  if (door_) door_->send(event.exec_id, event);
}

void LaunchHatch::run(int for_node, uint64_t exec_id, const std::vector<std::string>& command) {
  auto exec = std::make_unique<Exec>();
  exec->for_node = for_node;
  exec->exec_id = exec_id;
  Exec* e = exec.get();
  auto process =
      host_.start_command(join(command, " "), command_env_, [this, e](net::ExitInfo info) {
        e->exit = info;
        finished(*e);
      });
  if (!process)
    return output(for_node, exec_id,
                  end_event(exec_id, cat("cannot start the command on ", node_id_, ": ",
                                         process.error().message)));
  exec->process = std::move(process.value());
  for (bool is_stderr : {false, true}) {
    auto stream = is_stderr ? exec->process->take_stderr() : exec->process->take_stdout();
    if (!stream) continue;
    ++exec->open_streams;
    stream->start(
        [this, e, is_stderr](std::string_view bytes) {
          lattice::wire::ExecEvent event;
          event.launch_id = spec_.launch_id;
          event.exec_id = e->exec_id;
          event.is_stderr = is_stderr;
          event.data = std::string(bytes);
          output(e->for_node, e->exec_id, std::move(event));
        },
        [this, e](const Error&) {
          --e->open_streams;
          finished(*e);
        });
    (is_stderr ? exec->err : exec->out) = std::move(stream);
  }
  execs_[{for_node, exec_id}] = std::move(exec);
}

void LaunchHatch::output(int for_node, uint64_t exec_id, lattice::wire::ExecEvent event) {
  if (for_node == spec_.node_index) {
    if (event.exited) targets_.erase(exec_id);
    if (door_) door_->send(exec_id, event);
  } else {
    host_.send_to_node(for_node, lattice::wire::exec_event(event));
  }
}

void LaunchHatch::finished(Exec& exec) {
  if (!exec.exit || exec.open_streams > 0) return;  // the exit goes last, after all output
  auto done = end_event(exec.exec_id, {});
  done.exit_code = static_cast<int>(exec.exit->exit_status);
  done.signal = exec.exit->term_signal;
  output(exec.for_node, exec.exec_id, std::move(done));
  auto it = execs_.find({exec.for_node, exec.exec_id});
  if (it == execs_.end()) return;
  finished_.push_back(std::move(it->second));
  execs_.erase(it);
  reaper_.start(0, 0, [this] {
    finished_.clear();
    if (!running()) host_.commands_done();
  });
}

void LaunchHatch::kill(int signum) {
  for (auto& [key, exec] : execs_)
    if (exec->process && !exec->exit) exec->process->kill_group(signum);
}

}  // namespace lattice::agent
