// The launcher's stdin (--input) on its way to the input rank(s)' nodes, once every node has
// accepted: each chunk goes once per link that reaches one of them (a relay passes it to every
// input node below). Reading waits while a live node that reports what its ranks took
// (StdinTaken) is a window behind, so a rank reading slowly holds the input back and nothing is
// dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "launcher/agent_links.hpp"
#include "launcher/fan_out.hpp"
#include "launcher/input_source.hpp"
#include "net/loop.hpp"
#include "policy/job_policy.hpp"

namespace lattice::launcher {

class StdinFeed {
 public:
  // `fan_out`, `policy` and `links` must outlive the feed.
  StdinFeed(net::Loop& loop, int nodes, const FanOut& fan_out, const policy::JobPolicy& policy,
            AgentLinks& links, std::string launch_id);
  ~StdinFeed();

  // Its agent accepted, and says whether it reports what its ranks took.
  void accepted(int node, bool reports_taken) { at(node).reports_taken = reports_taken; }
  // Reads the launcher's stdin for `nodes`. An error: they get its end at once, and no input.
  Status start(std::vector<int> nodes);
  // StdinTaken: what the node's ranks took so far.
  void taken(int node, uint64_t bytes);
  // A node may have ended or gone (it takes no more input): reading may go on.
  void pace();
  void stop() { source_.reset(); }

 private:
  struct Node {
    bool reports_taken = false;
    uint64_t sent = 0, taken = 0;
  };
  Node& at(int node) { return nodes_[static_cast<size_t>(node)]; }
  void send(std::string_view data, bool eof);

  net::Loop& loop_;
  const FanOut& fan_out_;
  const policy::JobPolicy& policy_;
  AgentLinks& links_;
  std::string launch_id_;
  std::vector<Node> nodes_;
  std::vector<int> targets_;  // the nodes of the input rank(s)
  std::unique_ptr<InputSource> source_;
};

}  // namespace lattice::launcher
