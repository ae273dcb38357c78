// A launch's name service (MPI_Publish_name / MPI_Lookup_name) on this node: the names live at
// the launch's head (name_registry.hpp); elsewhere a request is a call to the head, within the
// fence timeout. Answers always come on a later loop turn, never from inside the request, so the
// PMI engine that asked is never re-entered.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/launch_spec.hpp"
#include "agent/name_registry.hpp"
#include "agent/node_links.hpp"
#include "net/timer.hpp"
#include "wire/names_codec.hpp"

namespace lattice::agent {

class LaunchNames {
 public:
  using Answer = std::function<void(const Result<std::string>&)>;
  // `spec` must outlive it.
  LaunchNames(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers);

  // A local rank's request; `answer` is not called once this is destroyed.
  void request(pmi::NameOp op, const std::string& name, const std::string& port, Answer answer);
  // A request from one of the launch's nodes, at the head.
  Result<std::string> asked(const wire::NameRequest& request) {
    return names_.apply(request.op, request.name, request.port);
  }

 private:
  const LaunchSpec& spec_;
  NodeLinks& peers_;
  NameRegistry names_;                                         // used at the head only
  std::vector<std::pair<Answer, Result<std::string>>> ready_;  // answered here, next turn
  net::Timer timer_;
  // The head's replies may come after this is gone: they look here first.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lattice::agent
