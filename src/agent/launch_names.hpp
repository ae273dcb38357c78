// A launch's name service (MPI_Publish_name / MPI_Lookup_name, PMIx_Publish / Lookup /
// Unpublish) on this node: the names live at the launch's head (name_registry.hpp); elsewhere a
// request is a call to the head. A PMIx lookup may wait for its name, up to the launch's fence
// timeout (its cap on anything the ranks wait for); the call waits that long and the fence
// timeout again. Answers always come on a later loop turn, never from inside the request, so the
// engine that asked is never re-entered. A spawned launch has no names of its own: its requests
// are its parent's (parent_launches.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/head_waiters.hpp"
#include "agent/launch_spec.hpp"
#include "agent/name_registry.hpp"
#include "agent/node_links.hpp"
#include "agent/parent_launches.hpp"
#include "agent/pmix_procs.hpp"
#include "net/timer.hpp"
#include "wire/names_codec.hpp"

namespace lattice::agent {

class LaunchNames {
 public:
  using Answer = std::function<void(const Result<std::string>&)>;
  // `spec` must outlive it; `nodes_of` says where the procs a PMIx request may name run (the
  // launch's and its children's); `parents` (null: none) finds a spawned launch's parent.
  LaunchNames(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers, ProcNodes nodes_of,
              ParentLaunches* parents);
  // Lookups still waiting here hear that the launch ended.
  ~LaunchNames();

  // A local rank's request; `answer` is never called after this is destroyed, but may be called
  // by its destructor (a lookup still waiting here: an error).
  void request(pmi::NameOp op, const std::string& name, const std::string& port, Answer answer);
  void request(wire::NameRequest request, Answer answer);
  // A request from node `from` of the launch (this node's own too), at the head.
  void asked(int from, const wire::NameRequest& request, Answer answer);

 private:
  void to_parent(wire::NameRequest request, Answer answer);
  void arm_deadline();

  net::Loop& loop_;
  const LaunchSpec& spec_;
  NodeLinks& peers_;
  ProcNodes nodes_of_;
  ParentLaunches* parents_;
  NameRegistry names_;  // used at the head only
  NameRegistry::Id next_id_ = 0;
  HeadWaiters<Result<std::string>> waiters_;
};

}  // namespace lattice::agent
