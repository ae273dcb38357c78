// One allocation as `lattice alloc` (lattice-api's stand-in) runs it: a link to every node,
// each sent its AllocationStart once all have proved who they are (and the CXI service, if any,
// is in hand); then the batch step, COMMAND launched on the first node as a job of one process
// without PMI; then the allocation's end on every node once the batch step ends, or as soon as
// one node ends it (its time limit, an operator) or is lost. The CXI service lives exactly as
// long as the allocation.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "launcher/agent_links.hpp"
#include "launcher/cxi_lease.hpp"
#include "launcher/job.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "secure/credentials.hpp"
#include "wire/allocation.hpp"

namespace lattice::launcher {

class AllocationRun {
 public:
  struct Plan {
    wire::AllocationSpec spec;  // but its nodes and node index, which the agents give
    LaunchOptions batch;        // the batch step: one process on node 0, no PMI
    JobRequest batch_request;
    bool verbose = false;
  };
  // `credentials`, `cxi` (null: no CXI) and `plan.batch` must outlive the run.
  AllocationRun(net::Loop& loop, const Clock& clock, const secure::Credentials& credentials,
                std::vector<AgentAddress> agents, Plan plan, CxiLease* cxi,
                std::function<void()> done);
  ~AllocationRun();

  void start();
  // SIGINT/SIGTERM to `lattice alloc`: to the batch step, as `lattice launch` forwards them.
  void signal(int signum);
  int exit_code() const;
  std::string final_report() const;

 private:
  enum class Stage { linking, starting, running, ending, done };
  AgentLinks::Handlers link_handlers();
  void authenticated();
  void send_starts();
  void started(int node, Result<schema::Envelope::Reader> reply);
  void run_batch();
  void batch_done();
  // The allocation ends everywhere it started (once); `failed`: it never got to its batch step.
  void end_everywhere(const std::string& reason, bool failed = false);
  void node_ended(int node, const wire::AllocationEnded& ended);
  void node_lost(int node, const std::string& why);
  void check_done();
  int nodes() const { return static_cast<int>(started_.size()); }
  const std::string& id(int node) const { return links_.address(node).node_id; }
  void say(const std::string& line) const;

  net::Loop& loop_;
  const Clock& clock_;
  const secure::Credentials& credentials_;
  Plan plan_;
  CxiLease* cxi_;
  std::function<void()> done_;
  AgentLinks links_;
  std::vector<bool> started_;  // the node holds the allocation
  std::vector<bool> ended_;    // the node ended it (or is lost, or never had it)
  Stage stage_ = Stage::linking;
  int authenticated_ = 0;
  bool starts_sent_ = false;
  int answered_ = 0;
  std::unique_ptr<Job> batch_;
  bool batch_finished_ = false;
  std::optional<std::string> end_reason_;  // why it ended before its batch step did
  std::string told_reason_;                // the reason its nodes were told to end it for
  bool time_limit_ = false;
  int exit_code_ = 1;
  uint64_t start_ns_;
  net::Timer end_timer_;  // nodes that never confirm the end are given up on
};

}  // namespace lattice::launcher
