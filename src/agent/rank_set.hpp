// This node's ranks of one launch, the one per-rank record of the agent: each rank's place
// (local rank, app, CPUs), its process, its output pipes (read line by line, paused while the
// launcher reads slowly), and its stdin (held until it starts, reported as it is taken). What
// the rank does at the wire-up level is the backend's (wire_up.hpp); whether it counts as a
// failure, the policy's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/launch_spec.hpp"
#include "agent/rank_resources.hpp"
#include "net/process.hpp"
#include "net/stream.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/line_buffer.hpp"

namespace lattice::agent {

class RankSet {
 public:
  class Events {
   public:
    virtual ~Events() = default;
    virtual void rank_output(int rank, bool is_stderr, std::string data) = 0;
    virtual void rank_exited(int rank, int pid, net::ExitInfo info) = 0;
    virtual void rank_pipe_closed(int rank) = 0;
    // Of the stdin this node received, `bytes` in all are now in its input ranks' pipes.
    virtual void input_taken(uint64_t bytes) = 0;
  };
  struct Rank {
    int rank = 0;
    int local_rank = 0;
    int app = 0;            // index into LaunchSpec::apps
    std::vector<int> cpus;  // --cpu-bind's choice; empty: not bound
    std::vector<std::pair<std::string, std::string>> gpu_env;  // its GPUs' variables
    std::unique_ptr<net::Process> process;                     // null until spawned
    int pid = -1;
    std::unique_ptr<net::Stream> out_stream, err_stream;
    std::unique_ptr<net::Stream> in_stream;  // the launcher's stdin, for an input rank
    proc::LineBuffer out_lines, err_lines;
  };

  // `spec` and `events` must outlive it.
  RankSet(const LaunchSpec& spec, Events& events);

  size_t size() const { return ranks_.size(); }
  auto begin() { return ranks_.begin(); }
  auto end() { return ranks_.end(); }
  // Each rank's CPUs and GPUs on this node (rank_resources.hpp), or why it refuses the launch.
  Status assign(const NodeResources& node);
  // Starts `rank` as `spawn` says (its pipes are the set's to read and feed).
  Status start(net::Loop& loop, Rank& rank, net::SpawnSpec& spawn);
  // Every rank that will start has: stdin held for the others is no longer waited for.
  void starting_done();
  bool any_running() const;
  size_t running() const;  // ranks whose process has not exited

  // A piece of the launcher's stdin for the input rank(s); `eof` ends it.
  void input(const std::string& data, bool eof);
  void pause_output();
  void resume_output();
  void close_output();                   // the policy gave up waiting for pipes a grandchild holds
  void kill(int signum);                 // every rank still running, with its process group
  void kill_rank(int rank, int signum);  // one of them, if it still runs

  std::vector<std::string> bindings() const;      // "RANK:CPUS" of each bound rank
  std::vector<std::pair<int, int>> pids() const;  // (rank, pid)

 private:
  void attach_output(Rank& rank, std::unique_ptr<net::Stream> stream, bool is_stderr);
  void feed_input(Rank& rank);  // a freshly started input rank gets the stdin held for it
  // Tells the events how much stdin the slowest input rank has taken, each kInputReportBytes.
  void report_input_taken();
  bool waits_for_input(const Rank& rank) const {
    return spec_.gets_input(rank.rank) && !rank.process && starting_;
  }

  const LaunchSpec& spec_;
  Events& events_;
  std::vector<std::unique_ptr<Rank>> ranks_;  // local-rank order; addresses stable
  bool starting_ = true;
  // Stdin that came before its rank started, and whether it has ended.
  std::string pending_input_;
  bool input_ended_ = false;
  uint64_t input_received_ = 0, input_reported_ = 0;  // stdin bytes in, and reported taken
};

}  // namespace lattice::agent
