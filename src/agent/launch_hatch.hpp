// A launch's escape hatch on this node (docs/pmi-wire.md §8): lattice-mpi-launcher's requests
// arrive at the launch's exec door and go to the named node of the launch (here, or over the
// sealed link to its agent); that node runs the command as the job's user through
// lattice-rank-exec and `/bin/sh -c`, as ssh would, and streams its output and exit status back
// to the door's client. Commands are killed when the launch fails and when their client goes
// away; the launch ends on a node only after the commands it runs there.
//
// The one owner of the door, the commands running here and the ones this node's clients asked
// of other nodes; the launch gives it what only the launch has (Host).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/escape_hatch.hpp"
#include "agent/exec_door.hpp"
#include "agent/launch_spec.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "rpc/outgoing.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::agent {

class LaunchDir;

class LaunchHatch {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    virtual bool failing() const = 0;  // an abort is under way: nothing new starts
    virtual bool ended() const = 0;
    // A process of the launch running `/bin/sh -c command` with `env` added to what commands
    // get; its exit comes to `on_exit`.
    virtual Result<std::unique_ptr<net::Process>> start_command(
        const std::string& command, const std::vector<std::pair<std::string, std::string>>& env,
        std::function<void(net::ExitInfo)> on_exit) = 0;
    virtual void send_to_node(int node, rpc::Outgoing message) = 0;
    virtual void commands_done() = 0;  // the last command running here has finished
  };
  LaunchHatch(net::Loop& loop, const LaunchSpec& spec, std::string node_id, Host& host);
  ~LaunchHatch();

  // The door and the host files in the launch's directory (still the agent's): an agent
  // without lattice-mpi-launcher (`mpi_launcher` empty) offers none. With `allocation`, the
  // launch is an allocation's batch step (or a command its MPI launcher runs): its host files
  // list the allocation's nodes and its MPI launchers reach them through the user door. A
  // command of such a launcher (spec.hatch_command) gets what hatch commands get: an orted's
  // session files here, not where its mpirun is.
  Status open(const LaunchDir& dir, const std::string& mpi_launcher,
              const std::optional<HatchHosts>& allocation = std::nullopt);
  void close_door();
  // What every rank gets to find the hatch (empty without one).
  const std::vector<std::pair<std::string, std::string>>& rank_env() const { return rank_env_; }

  // From node `from` (as its link proved): run a command here for it, end one, or an event of
  // a command it runs for this node.
  void remote_exec(int from, lattice::wire::ExecCommand command);
  void remote_exec_kill(int from, uint64_t exec_id);
  void remote_exec_event(int from, lattice::wire::ExecEvent event);

  bool running() const { return !execs_.empty(); }
  void kill(int signum);

 private:
  struct Exec {
    int for_node = 0;
    uint64_t exec_id = 0;
    std::unique_ptr<net::Process> process;
    std::unique_ptr<net::Stream> out, err;
    int open_streams = 0;
    std::optional<net::ExitInfo> exit;  // the exit goes out after all output
  };

  Status requested(uint64_t client, lattice::wire::ExecRequest request);
  void client_gone(uint64_t client);
  void run(int for_node, uint64_t exec_id, const std::vector<std::string>& command);
  void output(int for_node, uint64_t exec_id, lattice::wire::ExecEvent event);
  void finished(Exec& exec);
  lattice::wire::ExecEvent end_event(uint64_t exec_id, std::string error) const;

  net::Loop& loop_;
  const LaunchSpec& spec_;
  std::string node_id_;
  Host& host_;
  std::unique_ptr<ExecDoor> door_;
  std::vector<std::pair<std::string, std::string>> rank_env_;     // for ranks
  std::vector<std::pair<std::string, std::string>> command_env_;  // for hatch commands
  std::map<uint64_t, int> targets_;  // the node each door client's command runs on
  std::map<std::pair<int, uint64_t>, std::unique_ptr<Exec>> execs_;  // (asking node, exec id)
  std::vector<std::unique_ptr<Exec>> finished_;  // destroyed outside their callbacks
  net::Timer reaper_;
};

}  // namespace lattice::agent
