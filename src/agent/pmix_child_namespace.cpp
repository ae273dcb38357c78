#include "agent/pmix_child_namespace.hpp"

#include "agent/pmix_procs.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "wire/modex.hpp"

namespace lattice::agent {

ChildNamespace::ChildNamespace(const LaunchSpec& parent, NodeLinks& peers, pmix::Server& server,
                               std::string child_id, std::vector<int> layout,
                               std::function<void(pmix::CollectiveCall)> collective)
    : parent_(parent),
      peers_(peers),
      server_(server),
      child_id_(std::move(child_id)),
      layout_(std::move(layout)),
      collective_(std::move(collective)) {}

ChildNamespace::~ChildNamespace() {
  for (auto& [id, call] : modex_) server_.answer_modex(call, false, {});
  server_.deregister_job(namespace_of(child_id_));
}

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
  const int owner = layout_[static_cast<size_t>(call.rank)];
  uint64_t id = ++modex_id_;
  modex_.emplace(id, call);
  LAT_LOG(debug, "pmix", parent_.launch_id, ": direct modex for rank ", call.rank,
          " of spawned launch ", child_id_, " asked of node ", owner);
  peers_.call(
      parent_.peers[static_cast<size_t>(owner)], wire::modex_request({child_id_, call.rank}),
      parent_.fence_timeout_ms, [this, alive = std::weak_ptr<int>(alive_), id](auto reply) {
        if (alive.expired()) return;
        auto it = modex_.find(id);
        if (it == modex_.end()) return;
        auto data = wire::decode_modex_answer(reply);
        if (!data)
          LAT_LOG(warn, "pmix", child_id_, ": direct modex for rank ", it->second.rank, ": ",
                  data.error().message);
        server_.answer_modex(it->second, data.ok(), data ? std::move(*data) : std::string());
        modex_.erase(it);
      });
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
