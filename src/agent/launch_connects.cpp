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
      waiters_(loop) {}

LaunchConnects::~LaunchConnects() {
  waiters_.deliver_now(tally_.drop_all(cat("launch ", spec_.launch_id, " has ended")));
}

void LaunchConnects::enter(wire::CollectiveRequest request, Answer answer) {
  if (spec_.spawned_by) {  // the family's collective (its first launch runs wherever it does)
    const std::string& family = spec_.spawned_by->family_id();
    LaunchConnects* parent = parents_ ? parents_->connects_of(family) : nullptr;
    if (!parent) return waiters_.later(std::move(answer), parent_ended(family));
    return parent->enter(std::move(request), waiters_.guarded(std::move(answer)));
  }
  request.launch_id = spec_.launch_id;
  if (spec_.head_node == spec_.node_index)
    return asked(spec_.node_index, std::move(request), std::move(answer));
  // The head answers by the fence timeout; the call waits that long again for its answer.
  peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)], wire::collective_request(request),
              2 * spec_.fence_timeout_ms, [done = waiters_.guarded(std::move(answer))](auto reply) {
                done(wire::decode_collective_answer(reply));
              });
}

void LaunchConnects::asked(int from, wire::CollectiveRequest request, Answer answer) {
  ConnectTally::Id id = ++next_id_;
  waiters_.wait(id, std::move(answer));
  auto nodes = participant_nodes(request.procs, nodes_of_);
  if (!nodes)
    return waiters_.deliver(std::vector<ConnectTally::Answer>{
        {id, make_error(cat(wire::kind_name(request.kind), ": ", nodes.error().message))}});
  waiters_.deliver(tally_.arrive(id, request.kind, std::move(request.procs), *nodes, from,
                                 std::move(request.data), loop_.now_ms() + spec_.fence_timeout_ms,
                                 request.group));
  arm_deadline();
}

void LaunchConnects::arm_deadline() {
  waiters_.arm(tally_.next_deadline(), [this] {
    waiters_.deliver(tally_.expire(loop_.now_ms(), [this](int node) {
      return spec_.peers[static_cast<size_t>(node)].node_id;
    }));
    arm_deadline();
  });
}

}  // namespace lattice::agent
