#include "agent/pmix_child_namespace.hpp"

#include <map>

#include "agent/pmix_procs.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

ChildNamespace::ChildNamespace(const LaunchSpec& parent, pmix::Server& server, std::string child_id,
                               std::vector<int> layout,
                               std::function<void(pmix::RankCall, int node)> fetch,
                               std::function<void(pmix::CollectiveCall)> collective)
    : parent_(parent),
      server_(server),
      child_id_(std::move(child_id)),
      layout_(std::move(layout)),
      fetch_(std::move(fetch)),
      collective_(std::move(collective)) {}

ChildNamespace::~ChildNamespace() { server_.deregister_job(namespace_of(child_id_)); }

pmix::JobLayout ChildNamespace::job_layout(const std::string& tmpdir) const {
  // Its nodes as its own launch numbers them: the parent's that run its ranks, in order.
  std::map<int, int> index;
  for (int node : layout_) index.emplace(node, 0);
  pmix::JobLayout out;
  for (auto& [node, i] : index) {
    i = static_cast<int>(out.nodes.size());
    out.nodes.push_back(parent_.peers[static_cast<size_t>(node)].node_id);
  }
  for (int node : layout_) out.rank_nodes.push_back(index[node]);
  out.nspace = namespace_of(child_id_);
  out.jobid = child_id_;
  out.this_node = -1;
  out.tmpdir = tmpdir;
  return out;
}

void ChildNamespace::modex_requested(pmix::RankCall call) {
  if (call.rank < 0 || static_cast<size_t>(call.rank) >= layout_.size())
    return server_.answer_modex(call, false, {});
  const int node = layout_[static_cast<size_t>(call.rank)];
  fetch_(std::move(call), node);
}

void ChildNamespace::spawn_requested(pmix::SpawnCall call) {
  server_.answer_spawn(call, make_error("no rank of this namespace runs here"));
}

void ChildNamespace::control_asked(pmix::ControlCall call) {
  server_.answer_control(call, pmix::Answer::error);
}

void ChildNamespace::names_called(pmix::NameCall call) {
  server_.answer_names(call, make_error("no rank of this namespace runs here"));
}

}  // namespace lattice::agent
