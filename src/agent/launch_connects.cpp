#include "agent/launch_connects.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

LaunchConnects::LaunchConnects(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers,
                               ProcNodes nodes_of, ParentLaunches* parents)
    : loop_(loop),
      spec_(spec),
      peers_(peers),
      nodes_of_(std::move(nodes_of)),
      parents_(parents),
      timer_(loop),
      deadline_(loop) {}

LaunchConnects::~LaunchConnects() {
  for (auto& answer : tally_.drop_all(cat("launch ", spec_.launch_id, " has ended")))
    if (auto it = waiting_.find(answer.id); it != waiting_.end()) it->second(answer.result);
}

void LaunchConnects::enter(wire::CollectiveRequest request, Answer answer) {
  if (spec_.spawned_by) {  // the parent's collective (it runs wherever its children do)
    LaunchConnects* parent =
        parents_ ? parents_->connects_of(spec_.spawned_by->launch_id) : nullptr;
    if (!parent) {
      ready_.emplace_back(std::move(answer),
                          make_error(cat("launch ", spec_.spawned_by->launch_id,
                                         ", which spawned this one, has ended")));
      return deliver({});
    }
    return parent->enter(std::move(request), [alive = std::weak_ptr<int>(alive_),
                                              done = std::move(answer)](Result<std::string> r) {
      if (!alive.expired()) done(std::move(r));
    });
  }
  request.launch_id = spec_.launch_id;
  if (spec_.head_node == spec_.node_index)
    return asked(spec_.node_index, std::move(request), std::move(answer));
  // The head answers by the fence timeout; the call waits that long again for its answer.
  peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)], wire::collective_request(request),
              2 * spec_.fence_timeout_ms,
              [alive = std::weak_ptr<int>(alive_), done = std::move(answer)](auto reply) {
                if (!alive.expired()) done(wire::decode_collective_answer(reply));
              });
}

void LaunchConnects::asked(int from, wire::CollectiveRequest request, Answer answer) {
  ConnectTally::Id id = ++next_id_;
  waiting_.emplace(id, std::move(answer));
  auto nodes = participant_nodes(request.procs, nodes_of_);
  if (!nodes)
    return deliver(
        {{id, make_error(cat(wire::kind_name(request.kind), ": ", nodes.error().message))}});
  deliver(tally_.arrive(id, request.kind, std::move(request.procs), *nodes, from,
                        std::move(request.data), loop_.now_ms() + spec_.fence_timeout_ms));
  arm_deadline();
}

void LaunchConnects::deliver(std::vector<ConnectTally::Answer> answers) {
  for (auto& answer : answers) {
    auto it = waiting_.find(answer.id);
    if (it == waiting_.end()) continue;
    ready_.emplace_back(std::move(it->second), std::move(answer.result));
    waiting_.erase(it);
  }
  if (ready_.empty() || timer_.active()) return;
  timer_.start(0, 0, [this] {
    auto ready = std::move(ready_);
    ready_.clear();
    for (auto& [done, result] : ready) done(std::move(result));
  });
}

void LaunchConnects::arm_deadline() {
  auto next = tally_.next_deadline();
  if (!next) return deadline_.stop();
  uint64_t now = loop_.now_ms();
  deadline_.start(*next > now ? *next - now : 0, 0, [this] {
    deliver(tally_.expire(loop_.now_ms(), [this](int node) {
      return spec_.peers[static_cast<size_t>(node)].node_id;
    }));
    arm_deadline();
  });
}

}  // namespace lattice::agent
