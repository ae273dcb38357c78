// The failure policy of one launch as the launcher sees it, as a pure engine: events in (a node
// was sent its request, accepted it, ended, or is out: unreachable, unauthenticated, refused or
// lost; a signal to the launcher), actions out (abort or signal a node, drop a node that was
// never asked, finish). job.cpp carries out the actions; the tests drive it directly.
//
// It is also the launch's one record of where each node stands: asked or not, live, ended,
// refused, out; the launcher's report reads it (settled()).
//
// Aborts go to the head only: the head tells every other node (policy/launch_policy.hpp). A
// failure an agent reported (its LaunchEnded failed) is known to the head already, so the
// launcher sends nothing. Only when the head cannot pass it on — it is out, or it ended cleanly
// before the abort reached it — does the launcher tell every live node itself, once each. So a
// failing job costs O(N) messages, never one abort per failure per node.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "policy/failure.hpp"

namespace lattice::policy {

struct AbortNode {  // an AbortProcesses to this node, passing on the failure that began it
  int node;
  Failure failure;
};
struct SignalNode {  // a SignalProcesses to this node
  int node;
  int signum;
};
struct DropNode {  // never asked to launch: out of the launch, close its link
  int node;
};
struct Finish {};  // every node is done: the launcher may exit
using JobAction = std::variant<AbortNode, SignalNode, DropNode, Finish>;

// Keeps the failure that explains the job: the first one that names a rank, else the first that
// is not an echo of another node's (Failure::peer_ended), else the first.
void record_failure(std::optional<Failure>& current, Failure candidate);

class JobPolicy {
 public:
  // `kill_on_bad_exit` false (srun -K0): a node reporting only a rank's non-zero exit ends
  // nothing else; the exit still decides the job's status.
  JobPolicy(int nodes, int head, bool kill_on_bad_exit = true);

  // How a node left the launch, which tells what is known of its ranks (settled()).
  enum class Out {
    lost,       // unreachable, not authenticated, or lost: ranks it started may run unreported
    refused,    // it answered its request with an error: it started nothing
    not_asked,  // the request never reached it after all (a relay above it refused, or was lost)
  };

  std::vector<JobAction> sent(int node);
  std::vector<JobAction> accepted(int node);
  // Its LaunchEnded: every rank there is done (`failure`: why the launch failed there). Recorded
  // even after the node is out: a failing relayed launch's nodes may report by two ways.
  // `head_told`: the node told the head of its failure, as it does unless it lost its link to
  // the head (which the launcher may still reach, and then tells).
  std::vector<JobAction> ended(int node, std::optional<Failure> failure, bool head_told = true);
  // Unreachable, not authenticated, refused the launch, or lost: out of the launch.
  std::vector<JobAction> node_out(int node, Failure failure, Out how = Out::lost);
  // SIGINT/SIGTERM to the launcher: forwarded to the ranks (of nodes still being asked, once they
  // accept); a second SIGINT aborts the launch.
  std::vector<JobAction> signal(int signum);
  // The launcher's own reason to end the launch (the fabric manager refused its credentials, an
  // interrupt before any node was asked): nodes not yet asked are dropped, the rest aborted.
  std::vector<JobAction> failed(Failure failure);

  const std::optional<Failure>& failure() const { return failure_; }
  bool live(int node) const { return state(node) == State::live; }  // accepted, not ended
  bool done(int node) const { return state(node) == State::done; }  // ended or out
  // Sent its request (a relayed launch: every node with the head's), as far as is known.
  bool asked(int node) const { return at(node).asked; }
  bool has_ended(int node) const { return at(node).ended; }  // its LaunchEnded came
  // No rank of it can be running unreported: it ended, refused, or was never asked.
  bool settled(int node) const {
    const Node& n = at(node);
    return n.ended || n.refused || !n.asked;
  }
  bool aborting() const { return aborting_; }
  bool finished() const { return finished_; }

 private:
  enum class State { idle, sent, live, done };
  struct Node {
    State state = State::idle;
    bool asked = false;
    bool ended = false;         // its LaunchEnded came: every rank it started has exited
    bool refused = false;       // it answered its request with an error: it started nothing
    bool ended_failed = false;  // its LaunchEnded reported a failure (so, at the head, it told all)
    bool told = false;          // the launcher sent it an abort
  };
  const Node& at(int node) const { return nodes_.at(static_cast<size_t>(node)); }
  State state(int node) const { return at(node).state; }
  std::vector<JobAction> abort(Failure failure, bool head_knows);
  void dispatch(std::vector<JobAction>& out);
  void check_finished(std::vector<JobAction>& out);
  void set_done(Node& n);  // n was not done

  std::vector<Node> nodes_;
  int head_;
  bool kill_on_bad_exit_;
  std::optional<Failure> failure_;
  Failure abort_failure_;       // the failure that began the abort (what aborts pass on)
  std::vector<int> forwarded_;  // signals forwarded so far, each once (SIGINT, SIGTERM)
  int interrupts_ = 0;
  bool aborting_ = false;
  bool head_knows_ = false;  // the head has been told (by us or by the failing agent)
  bool finished_ = false;
  size_t done_ = 0;  // nodes in State::done
};

}  // namespace lattice::policy
