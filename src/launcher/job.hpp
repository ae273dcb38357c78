// One launch seen from the launcher: links to every agent (agent_links.hpp), and once an agent
// has proved it holds the cluster key (and so its node id), sends it its LaunchProcesses; prints
// the ranks' output as it arrives, gathers exit statuses, forwards signals, and carries out what
// the failure policy decides (policy/job_policy.hpp, which also records where each node stands)
// when a node refuses, cannot be reached or authenticated, fails, or is lost.
//
// Which link reaches which node, star or relayed down the fence tree, is the fan-out's to say
// (fan_out.hpp); what the launch reports at its end is job_report.cpp's.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "launcher/agent_links.hpp"
#include "launcher/cxi_lease.hpp"
#include "launcher/export_env.hpp"
#include "launcher/fan_out.hpp"
#include "launcher/job_user.hpp"
#include "launcher/launch_request.hpp"
#include "launcher/layout.hpp"
#include "launcher/local_agents.hpp"
#include "launcher/options.hpp"
#include "launcher/output_files.hpp"
#include "launcher/output_writer.hpp"
#include "launcher/report.hpp"
#include "launcher/stdin_feed.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "policy/job_policy.hpp"
#include "secure/cluster_key.hpp"
#include "wire/reports.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::launcher {

class Job {
 public:
  using Request = JobRequest;
  // `reach`: how the agents are reached (agent_links.hpp); its key must outlive the job.
  // With `cxi` (which must outlive the job), no request goes out before the launch's CXI
  // credentials are in hand, and a fabric manager that refuses them fails the launch.
  Job(net::Loop& loop, const Clock& clock, const LaunchOptions& options, AgentReach reach,
      Layout layout, std::vector<AgentAddress> agents, Request request, std::function<void()> done,
      CxiLease* cxi = nullptr);
  ~Job();

  // `resolve_ms`: what the launcher spent before the job started (for -v).
  void start(double resolve_ms = -1);
  // SIGINT/SIGTERM to the launcher: forwarded to every rank; a second SIGINT aborts.
  void signal(int signum);
  int exit_code() const;
  // Failure line, exit summary and timings for stderr ("" when the job succeeded quietly).
  std::string final_report() const;
  // A spawned launch (spawn_plan.hpp): `started` hears once that every node accepted it, or
  // why it will not run; `label` marks its ranks' output under -l ("1.0: " for its rank 0);
  // `family_nodes`: each of its nodes as an index into its family's first launch's nodes.
  void as_spawned(std::string label, std::vector<int> family_nodes,
                  std::function<void(Status)> started);
  // The launch ends: SIGTERM to every rank, as for the launcher's own signal.
  void end_now(const std::string& why);

 private:
  // What the launch keeps of a node besides its link (links_) and where it stands (policy_): when
  // it was asked and answered, and what its agent told of its part, for the report.
  struct Node {
    double sent_ms = -1;
    double accepted_ms = -1;
    double replied_ms = 0;         // the agent's time from the request's arrival to its reply
    bool waiting_for_cxi = false;  // ready to be sent its request once the credentials are in
    wire::NodeTimes times{};       // from its LaunchEnded
    uint32_t strays = 0;           // processes the launch left there, which its agent killed
  };

  // A spawned launch of this one's ranks, with the options it runs by (the job keeps a
  // reference), ended with it.
  struct Child {
    std::unique_ptr<LaunchOptions> options;
    std::unique_ptr<Job> job;
    bool done = false;
  };

  AgentLinks::Handlers link_handlers();
  // A rank's PMIx_Spawn, from the head (`via` carries it): children as a launch of their own,
  // answered with its id once every node accepted it.
  void spawn(int via, uint64_t request_id, Result<wire::SpawnRequest> request);
  // A spawn's hostfiles (read as the job's user) add their hosts to its own.
  Status read_hostfiles(wire::SpawnRequest& request) const;
  void child_done(size_t index);
  // Node `node` of this launch as an index into its family's first launch's nodes.
  int family_node(int node) const;
  void started(Status status);
  // Its agent proved who it is (agent_links.hpp).
  void authenticated(int node);
  void send_launch(int node);
  // Every node id is final: the fabric manager can be asked for the launch's CXI service.
  void provision_cxi();
  void on_message(int via, schema::Envelope::Reader envelope);
  // Its answer to its request: LaunchAccepted, or why not (`lost`: it was lost, not refused).
  void answered(int node, Result<wire::Accepted> reply, bool lost);
  void node_out(int node, JobFailure failure,
                policy::JobPolicy::Out how = policy::JobPolicy::Out::lost);
  // The link to `node` closed, or missed its heartbeats.
  void link_lost(int node, JobFailure failure);
  // A relayed launch whose head is lost: links to every node still running, which end their
  // ranks and report directly (what they could not pass up meanwhile, they held).
  void go_direct(const JobFailure& why);
  // Whether the link to `node` still carries something: its own reports, or (the relaying head)
  // anyone's.
  bool carrying(int node) const;
  // A relayed launch hears of a node only through the tree: should a relay and the node that
  // watches it both be lost, nobody reports the nodes below. Once the abort is out, a node whose
  // end has not come up within kAgentResponseMs (beyond the agents' grace and drain) is lost.
  void await_ends();
  // Carries out the policy's actions, in order.
  void run(std::vector<policy::JobAction> actions);
  void finish();
  // Every node accepted: the launcher's stdin starts flowing to the input rank(s)' nodes.
  void start_input();
  Node& at(int node) { return nodes_[static_cast<size_t>(node)]; }
  const std::string& id(int node) const { return links_.address(node).node_id; }
  // Each node's launch clock on the launcher's (nullopt: never sent the request), for -v: by the
  // request's round trip, refined by the fences where the launcher knows their tree.
  std::vector<std::optional<double>> agent_clock_origins() const;
  double now_ms() const;
  // Our stdout or stderr holds too much the reader has not taken: stop reading the agents (they
  // then hold their ranks back) until it is all written.
  void maybe_pause_output();
  // `fn` once both stdout and stderr have written what they hold.
  void when_written(std::function<void()> fn);
  // Nobody reads our stdout or stderr any more (`| head`): the launch ends, as under srun and
  // Hydra, with the status of a command killed by SIGPIPE.
  void reader_gone(const char* stream);
  void say(const std::string& line) { err_.write(line); }  // a launcher message on stderr

  net::Loop& loop_;
  const Clock& clock_;
  const LaunchOptions& options_;
  Layout layout_;
  Request request_;
  std::function<void()> done_;
  FanOut fan_out_;
  AgentLinks links_;
  std::vector<Node> nodes_;
  std::map<int, RankResult> ranks_;
  // -l: whether each rank's stdout and stderr are at a line's start (a long line comes in pieces).
  std::vector<std::array<bool, 2>> line_starts_;
  policy::JobPolicy policy_;
  OutputWriter out_, err_;    // the launcher's own stdout and stderr
  OutputFiles outputs_;       // where ranks' output goes (--output/--error)
  bool reader_gone_ = false;  // the launch ends because its output has nowhere to go
  std::string workdir_;       // where the ranks start
  // What every node's request says but its node index (send_launch).
  std::optional<wire::LaunchRequest> launch_request_;
  std::vector<Straggler> stragglers_;  // from every node's LaunchEnded
  net::Timer deadline_timer_;
  net::Timer ends_timer_;  // a relayed launch's abort: nodes whose end never comes up are lost
  uint64_t start_ns_;
  double connected_ms_ = -1;
  double resolve_ms_ = -1;
  size_t accepted_ = 0;
  std::set<std::string> env_left_out_;   // hooks an agent left out of a root job, said once each
  StdinFeed input_;                      // the launcher's stdin (--input), once all accepted
  CxiLease* cxi_;                        // null: the launch runs without CXI
  AgentReach reach_;                     // how spawned launches reach the same agents
  std::vector<Child> children_;          // spawned launches, in order (their label: index + 1)
  std::string label_;                    // a spawned launch's, before each rank's under -l
  std::function<void(Status)> started_;  // a spawned launch's, until said
  std::vector<int> family_nodes_;        // a spawned launch's (as_spawned); empty: the first
  bool finished_ = false;                // finish() ran; done_ waits for the children
};

// A random (version 4) UUID, as the design's environment table has launch ids.
std::string new_launch_id();

}  // namespace lattice::launcher
