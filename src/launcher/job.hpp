// One launch seen from the launcher: connects to every agent at once, sends each its
// LaunchProcesses as soon as its connection is up, prints the ranks' output as it arrives,
// gathers exit statuses, forwards signals, and aborts the whole launch when any node refuses,
// cannot be reached or is lost.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/layout.hpp"
#include "launcher/local_agents.hpp"
#include "launcher/options.hpp"
#include "launcher/report.hpp"
#include "link/connection.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::launcher {

class Job {
 public:
  Job(net::Loop& loop, const LaunchOptions& options, Layout layout,
      std::vector<AgentAddress> agents, std::string launch_id, std::function<void()> done);
  ~Job();

  void start();
  // SIGINT/SIGTERM to the launcher: forwarded to every rank; a second SIGINT aborts.
  void signal(int signum);
  int exit_code() const;
  // Failure line, exit summary and timings for stderr ("" when the job succeeded quietly).
  std::string final_report() const;

 private:
  struct Node {
    AgentAddress address;
    std::unique_ptr<link::Connection> conn;
    bool launched = false;  // the agent accepted the launch
    bool done = false;      // LaunchEnded arrived, or the node is out of the launch
    uint32_t unanswered = 0;  // heartbeats sent and not yet answered
    double accepted_ms = -1;
    double sent_ms = -1;
    uint64_t spawned_us = 0, first_init_us = 0, last_finalize_us = 0, exited_us = 0;
  };

  void connected(Node& node, std::unique_ptr<net::Stream> stream);
  void send_launch(Node& node);
  void on_message(Node& node, schema::Envelope::Reader envelope);
  void node_out(Node& node, JobFailure failure);
  void abort_all(const std::string& reason);
  // Sends a notification, filled by `fill`, to every node still running the launch.
  void notify_live_nodes(const std::function<void(schema::Envelope::Body::Builder)>& fill);
  void check_done();
  void heartbeat();
  double now_ms() const;

  net::Loop& loop_;
  const LaunchOptions& options_;
  Layout layout_;
  std::string launch_id_;
  std::function<void()> done_;
  std::vector<Node> nodes_;
  std::map<int, RankResult> ranks_;
  std::optional<JobFailure> failure_;
  std::vector<std::string> stragglers_;  // "rank R on NODE: ..." from every node's LaunchEnded
  net::Timer deadline_timer_;
  net::Timer heartbeat_timer_;
  uint64_t start_ns_;
  double connected_ms_ = -1;
  int interrupts_ = 0;
  bool aborting_ = false;
  bool finished_ = false;
};

std::string new_launch_id();

}  // namespace lattice::launcher
