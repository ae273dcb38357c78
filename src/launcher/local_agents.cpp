#include "launcher/local_agents.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "secure/cluster_key.hpp"

extern char** environ;

namespace lattice::launcher {

struct LocalAgents::Agent {
  AgentAddress address;
  std::unique_ptr<net::Process> process;
  std::unique_ptr<net::Stream> ready_stream;
  std::string ready_line;
  bool ready = false;
  bool exited = false;
};

LocalAgents::LocalAgents(net::Loop& loop, LocalAgentPaths paths)
    : loop_(loop), paths_(std::move(paths)) {}

LocalAgents::~LocalAgents() {
  for (auto& agent : agents_)
    if (agent->process && !agent->exited) agent->process->kill_group(SIGKILL);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void LocalAgents::start(int count, ReadyFn ready) {
  ready_ = std::move(ready);
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = cat(tmp && *tmp ? tmp : "/tmp", "/lattice-XXXXXX");
  if (!::mkdtemp(pattern.data()))
    return ready_(make_error(cat("cannot create ", pattern, " for local agents")));
  dir_ = pattern;
  // Searchable, not listable: a job running as another user must reach its launch directory
  // below (PMIx and Open MPI name paths there); the key file stays 0600.
  if (::chmod(dir_.c_str(), 0711) != 0)
    return ready_(make_error(cat("cannot open up ", dir_, " for local agents")));
  key_file_ = cat(dir_, "/cluster.key");
  if (auto made = secure::generate_key_file(key_file_); !made)
    return ready_(make_error(cat("local mode: ", made.error().message)));

  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  waiting_ = count;
  for (int i = 0; i < count; ++i) {
    auto agent = std::make_unique<Agent>();
    Agent* a = agent.get();
    // Each node its own address: 127.0.0.1, 127.0.0.2, ... 127.0.1.0 (all of 127/8 is loopback).
    a->address.node_id = cat('n', i + 1);
    a->address.host = cat("127.0.", (i + 1) / 256, '.', (i + 1) % 256);
    agents_.push_back(std::move(agent));

    net::SpawnSpec spec;
    spec.file = paths_.agentd;
    spec.argv = {paths_.agentd, "--listen", a->address.host + ":0", "--node-id", a->address.node_id,
                 "--admin-socket", cat(dir_, '/', a->address.node_id, ".sock"),
                 // Per-node socket dirs: every node serves the launch's socket under one name.
                 "--pmi-socket-dir", cat(dir_, '/', a->address.node_id), "--log-level",
                 paths_.log_level, "--key-file", key_file_, "--ready-fd", "3"};
    if (::geteuid() == 0) spec.argv.push_back("--allow-root-jobs");
    spec.env = env;
    spec.channel = true;  // its --ready-fd
    spec.capture_stdout = false;
    spec.capture_stderr = false;
    spec.parent_death_signal = SIGKILL;
    auto process = net::Process::spawn(loop_, spec, [this, a](net::ExitInfo info) {
      a->exited = true;
      if (!a->ready)
        agent_failed(*a, cat("exited before it was ready (status ", info.exit_status,
                             info.term_signal ? cat(", signal ", info.term_signal) : "", ")"));
      check_stopped();
    });
    if (!process) return agent_failed(*a, process.error().message);
    a->process = std::move(process.value());
    a->ready_stream = a->process->take_channel();
    a->ready_stream->start(
        [this, a](std::string_view bytes) {
          a->ready_line.append(bytes);
          if (a->ready_line.find('\n') != std::string::npos) agent_ready(*a, a->ready_line);
        },
        [](const Error&) {});
  }
}

void LocalAgents::agent_ready(Agent& agent, const std::string& line) {
  if (agent.ready) return;
  auto hp = parse_host_port(line.substr(0, line.find('\n')));
  if (!hp) return agent_failed(agent, cat("reported a bad address '", line, "'"));
  agent.ready = true;
  agent.address.port = hp->port;
  agent.ready_stream->close();
  if (--waiting_ == 0 && ready_) {
    std::vector<AgentAddress> out;
    for (auto& a : agents_) out.push_back(a->address);
    auto fn = std::move(ready_);
    ready_ = nullptr;
    fn(std::move(out));
  }
}

void LocalAgents::agent_failed(Agent& agent, const std::string& why) {
  if (!ready_) return;  // reported already
  auto fn = std::move(ready_);
  ready_ = nullptr;
  fn(make_error(cat("local agent ", agent.address.node_id, " (", paths_.agentd, "): ", why)));
}

void LocalAgents::stop(std::function<void()> done) {
  stopped_ = std::move(done);
  for (auto& agent : agents_)
    if (agent->process && !agent->exited) agent->process->kill_group(SIGTERM);
  check_stopped();  // finishes at once when none is alive
}

void LocalAgents::check_stopped() {
  if (!stopped_) return;
  for (auto& agent : agents_)
    if (agent->process && !agent->exited) return;
  auto fn = std::move(stopped_);
  stopped_ = nullptr;
  fn();
}

}  // namespace lattice::launcher
