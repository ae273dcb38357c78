// Local mode: start the agents a launch needs on this machine, each its own lattice-agentd
// process on its own loopback address (127.0.0.1, .2, ...), and stop them afterwards. Agents get
// SIGKILL as their parent-death signal, so that they die with the launcher even if it is
// SIGKILLed. They share
// a throwaway cluster key made in the private temp dir (mode 0700), so local mode needs no
// set-up; as root they are allowed root jobs, since the invoking user is root.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "net/stream.hpp"

namespace lattice::launcher {

struct AgentAddress {
  std::string node_id;  // the id it must prove, when name_known; else a label until it does
  std::string host;
  int port = 0;
  bool name_known = true;
};

struct LocalAgentPaths {
  std::string agentd;     // lattice-agentd
  std::string log_level;  // for the agents' own stderr
};

class LocalAgents {
 public:
  using ReadyFn = std::function<void(Result<std::vector<AgentAddress>>)>;
  LocalAgents(net::Loop& loop, LocalAgentPaths paths);
  ~LocalAgents();

  // Starts `count` agents; `ready` runs once, when all have reported their port or one failed.
  void start(int count, ReadyFn ready);
  // SIGTERM to every agent; `done` runs when all have exited and the temp dir is gone.
  void stop(std::function<void()> done);
  // The throwaway key the agents use; valid once start() reported them ready.
  const std::string& key_file() const { return key_file_; }

 private:
  struct Agent;
  void agent_ready(Agent& agent, const std::string& line);
  void agent_failed(Agent& agent, const std::string& why);
  void check_stopped();

  net::Loop& loop_;
  LocalAgentPaths paths_;
  std::string dir_;
  std::string key_file_;
  std::vector<std::unique_ptr<Agent>> agents_;
  ReadyFn ready_;
  std::function<void()> stopped_;
  int waiting_ = 0;
};

}  // namespace lattice::launcher
