// Where one launch's reports go from this node, and its one owner: back on the link the launch
// came on, up a relayed launch's tree (launch_relay.hpp), or held while there is no way up;
// the relay's requests to the children and what passes through this node for them; and the
// backpressure a slow reader of the reports puts on the ranks' output. The agent's entry for
// the launch owns it, and the launch reports to it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/authority.hpp"
#include "agent/launch.hpp"
#include "agent/launch_relay.hpp"
#include "agent/node_links.hpp"
#include "link/connection.hpp"
#include "net/loop.hpp"

namespace lattice::agent {

// What a report passing up a relayed launch is about: its launch, the node it names and, for
// output and exits, the rank (-1 when it names none).
struct ReportAbout {
  std::string launch_id;
  int node = -1;
  int rank = -1;
};
// Null for anything that does not come up a relayed launch's links.
std::optional<ReportAbout> report_about(schema::Envelope::Reader envelope);

class LaunchRoute final : public LaunchSink {
 public:
  // What the route needs of the agent's connections.
  class Host {
   public:
    virtual ~Host() = default;
    virtual link::Connection* open_connection(uint64_t id) = 0;  // null once closed
    // Connection `id` has written what it held: the launches reporting on it read output again.
    virtual void drained(uint64_t id) = 0;
    virtual void reap_soon() = 0;  // a launch may be done with
    virtual bool stopping() const = 0;
  };
  // The launch came on connection `launcher_conn`; `node_id` is this node's.
  LaunchRoute(net::Loop& loop, Host& host, NodeLinks& peers, std::string node_id,
              uint64_t launcher_conn);
  // The launch that reports here (it is made with this route as its sink).
  void attach(Launch& launch);

  // The connection its launcher (or, relayed, its parent) speaks on.
  uint64_t launcher_conn() const { return launcher_conn_; }
  bool relayed() const { return relay_ != nullptr; }
  // Its ranks have ended and every report of it and of the nodes below has gone up.
  bool relayed_all() const;
  // For the agent's reap, which lets the entry go when true: relayed_all, or it has waited long
  // enough (then it says what is left behind).
  bool reapable(uint64_t now) const;

  // LaunchSink
  void output(Launch& launch, int rank, bool is_stderr, std::string data) override;
  void rank_exited(Launch& launch, int rank, int pid, proc::ExitStatus status) override;
  void input_taken(Launch& launch, uint64_t bytes) override;
  void ask_launcher(Launch& launch, rpc::Outgoing request, uint64_t timeout_ms,
                    rpc::ResponseCallback answer) override;
  void ended(Launch& launch, const wire::LaunchEnded& end) override;

  // A relayed launch: the request on to this node's children, each holding its link.
  void relay_request(schema::LaunchProcessesRequest::Reader request);
  // A report from below (a child's, or at the head one from a node whose way up was lost),
  // passed up when the relay allows it.
  void pass_up(const Sender& sender, const ReportAbout& about, schema::Envelope::Reader envelope);
  // What came down the link the launch came on (a signal, an abort, stdin), on to the children
  // (for stdin, those with input ranks below). From any other link: nothing.
  void pass_down(uint64_t conn, schema::Envelope::Reader envelope);
  // The link to `node_id` was lost: a child or the parent of this node is reported lost.
  void peer_lost(const std::string& node_id, const std::string& reason);
  // The link the launch came on closed.
  void launcher_lost(const std::string& reason);
  // A relayed launch's launcher reached this node directly (its head was lost): the link
  // becomes the launch's, and the reports held meanwhile go on it.
  void adopt(const Sender& sender);
  // The reader caught up, or nobody reads any more: the ranks' output flows again.
  void resume_output();

 private:
  // This node's reports: to the link the launch came on, or where its relay says.
  void report(rpc::Outgoing message);
  void hold_report(rpc::Outgoing message);
  // This node's own exits and end. While its launch is failing, a relayed launch's tree may be
  // what broke (a relay lost, silently or with these in flight, before this node could know):
  // they also go straight to the head, which takes any node's reports about itself.
  void report_own(rpc::Outgoing message);
  // The link reports go on reads slower than they come: the launch's output, and its
  // children's, wait until it drains.
  void hold_back_output();
  void set_children_reading(bool reading);
  void child_answered(int child, const Result<schema::Envelope::Reader>& reply);
  // `message` to each of the nodes `to` (children of this node), encoded once.
  void send_down(const std::vector<int>& to, rpc::Outgoing message);
  const LaunchSpec& spec() const { return launch_->spec(); }

  net::Loop& loop_;
  Host& host_;
  NodeLinks& peers_;
  const std::string node_id_;
  Launch* launch_ = nullptr;
  uint64_t launcher_conn_;
  bool output_paused_ = false;  // until the launcher's connection drains
  // A relayed launch's routing, and its children's links held (heartbeated) meanwhile; the
  // entry outlives the launch until every node below is settled (or kRelayLingerMs).
  std::unique_ptr<LaunchRelay> relay_;
  std::vector<NodeLinks::Hold> child_holds_;
  uint64_t ended_ms_ = 0;  // when the launch ended here (0: running)
  // Reports with no way up (the parent and the head lost), encoded, until the launcher
  // reaches this node directly; output beyond kHeldReportBytes is dropped.
  std::vector<std::string> held_reports_;
  size_t held_bytes_ = 0;
  // The children's answers may come after the route is gone: they look here first.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lattice::agent
