// A launch's PMIx collectives over some procs (connect, disconnect, a fence over part of the
// job) on this node: the tally lives at the launch's head (connect_tally.hpp); elsewhere this
// node's entry is a call to the head. A collective not complete within the launch's fence timeout
// fails for every node in it. Answers come on a later loop turn, never from inside the request.
// A spawned launch's collectives are its parent's (parent_launches.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/connect_tally.hpp"
#include "agent/head_waiters.hpp"
#include "agent/launch_spec.hpp"
#include "agent/node_links.hpp"
#include "agent/parent_launches.hpp"
#include "agent/pmix_procs.hpp"
#include "net/timer.hpp"
#include "wire/connect_codec.hpp"

namespace lattice::agent {

class LaunchConnects {
 public:
  using Answer = std::function<void(Result<wire::CollectiveAnswer>)>;
  // `spec` must outlive it; `nodes_of` says where the procs a collective names run (the launch's
  // and its children's); `parents` (null: none) finds a spawned launch's parent.
  LaunchConnects(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers, ProcNodes nodes_of,
                 ParentLaunches* parents);
  // Collectives still open here hear that the launch ended.
  ~LaunchConnects();

  // This node's entry; `answer` is never called after this is destroyed, but may be called by its
  // destructor (with an error).
  void enter(wire::CollectiveRequest request, Answer answer);
  // Node `from`'s entry (this node's own too), at the head.
  void asked(int from, wire::CollectiveRequest request, Answer answer);
  // Node `node` is gone (at the head): the collectives it takes part in fail.
  void node_lost(int node, const std::string& why) {
    waiters_.deliver(tally_.node_lost(node, why));
  }

 private:
  void arm_deadline();

  net::Loop& loop_;
  const LaunchSpec& spec_;
  NodeLinks& peers_;
  ProcNodes nodes_of_;
  ParentLaunches* parents_;
  ConnectTally tally_;  // used at the head only
  ConnectTally::Id next_id_ = 0;
  HeadWaiters<Result<wire::CollectiveAnswer>> waiters_;
};

}  // namespace lattice::agent
